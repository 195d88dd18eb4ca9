import ArgumentParser
import ContactsLocal
import ContactsModel
import ContactsStore
import Foundation
import SyncCore

#if canImport(Glibc)
    import Glibc
#endif

struct PhotoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "photo", abstract: "Write a contact's photo, or set or remove it.",
        discussion: """
            With no option, writes the photo to --output, or to standard output when it is not a terminal \
            (downloading it first when this device does not have it yet). --set FILE gives the contact \
            that image (its type from --type, else from the file's first bytes); --remove takes the photo \
            away. A photo syncs to other devices as an encrypted asset; they download it when it is shown \
            or exported, or all at once with `contacts sync --photos`.
            """)

    @OptionGroup var global: GlobalOptions
    @Argument(help: "The contact's ID, or the start of it (as `contacts list` shows).") var id: String
    @Option(help: ArgumentHelp("Write the photo to this file (mode 0600).", valueName: "file")) var output: String?
    @Option(help: ArgumentHelp("Give the contact the image in this file.", valueName: "file")) var set: String?
    @Option(help: ArgumentHelp("The image's media type with --set, such as image/png.", valueName: "type"))
    var type: String?
    @Flag(help: "Remove the contact's photo.") var remove = false
    @OptionGroup var edit: EditSyncOptions

    func validate() throws {
        guard [output != nil, set != nil, remove].filter({ $0 }).count <= 1 else {
            throw ValidationError("pass at most one of --output, --set and --remove")
        }
        if type != nil && set == nil { throw ValidationError("--type goes with --set") }
        if let type, !type.contains("/") || type.contains(where: \.isWhitespace) {
            throw ValidationError("--type must be a media type such as image/jpeg")
        }
    }

    func run() async throws {
        let writes = set != nil || remove
        let device = try await Session.open(global, needsServer: writes ? edit.syncs : true)
        let contactID = try device.reader.resolve(id)
        if let set {
            let file = URL(fileURLWithPath: set)
            let head: Data
            do {
                let handle = try FileHandle(forReadingFrom: file)
                defer { try? handle.close() }
                head = try handle.read(upToCount: 12) ?? Data()
            } catch {
                throw CommandFailure("cannot read \(set): \(error.localizedDescription); give the path of an image")
            }
            let contact = try device.contacts.setPhoto(
                of: contactID, file: file, mediaType: type ?? Self.mediaType(of: head))
            print("\(contact.name.terminalSafe): photo set (\(contact.photo!.summary))")
            await edit.syncAfterEdit(device)
            return
        }
        if remove {
            let contact = try device.contacts.removePhoto(of: contactID)
            print("\(contact.name.terminalSafe): photo removed")
            await edit.syncAfterEdit(device)
            return
        }
        let file: URL
        do {
            file = try await device.contacts.photoFile(of: contactID)
        } catch let error as SyncError {
            throw CommandFailure("the photo could not be downloaded: \(CLIWords.say(error))")
        }
        let size = (try? FileManager.default.attributesOfItem(atPath: file.path)[.size] as? NSNumber)?.intValue ?? 0
        if let output {
            do {
                try PrivateFile.replace(output, copying: file.path)
            } catch {
                throw CommandFailure(error.description)
            }
            warn("wrote the photo to \(output) (\(size) bytes, readable by you only)")
            return
        }
        guard isatty(STDOUT_FILENO) != 1 else {
            throw CommandFailure(
                "the photo is an image, which a terminal cannot show as text: write it to a file (--output FILE) or a pipe"
            )
        }
        let input = try FileHandle(forReadingFrom: file)
        defer { try? input.close() }
        while let chunk = try input.read(upToCount: 1 << 20), !chunk.isEmpty {
            FileHandle.standardOutput.write(chunk)
        }
    }

    /// The media type an image's first bytes say, image/jpeg when they say none this knows.
    static func mediaType(of image: Data) -> String {
        let head = [UInt8](image.prefix(12))
        if head.starts(with: [0x89, 0x50, 0x4E, 0x47]) { return "image/png" }
        if head.starts(with: [0x47, 0x49, 0x46, 0x38]) { return "image/gif" }
        if head.count >= 12, head[0..<4] == [0x52, 0x49, 0x46, 0x46], head[8..<12] == [0x57, 0x45, 0x42, 0x50] {
            return "image/webp"
        }
        return "image/jpeg"
    }
}
