extension UInt8 {
    /// The value of this byte as an ASCII hexadecimal digit (either case); nil for any other byte. For
    /// quoted-printable here, and for the contacts app's reading of UUIDs.
    package var hexDigitValue: UInt8? {
        switch self {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): self - UInt8(ascii: "0")
        case UInt8(ascii: "A")...UInt8(ascii: "F"): self - UInt8(ascii: "A") + 10
        case UInt8(ascii: "a")...UInt8(ascii: "f"): self - UInt8(ascii: "a") + 10
        default: nil
        }
    }
}
