import Crypto
import Foundation
import NIOSSL
import _CryptoExtras

/// A certificate chain and its private key, as PEM files, for the server's TLS on its TCP listener.
public struct TLSFiles: Sendable, Hashable {
    /// The server's certificate first, then any intermediates.
    public var certificatePath: String
    /// The certificate's private key, unencrypted.
    public var keyPath: String

    public init(certificatePath: String, keyPath: String) {
        self.certificatePath = certificatePath
        self.keyPath = keyPath
    }

    /// Reads both files and checks that the key is the certificate's.
    ///
    /// - Throws: ``TLSFilesError`` naming the file and what is wrong with it.
    package func serverConfiguration() throws -> TLSConfiguration {
        let certificatePEM = try Self.read(certificatePath, what: "TLS certificate")
        let keyPEM = try Self.read(keyPath, what: "TLS private key")
        let chain: [NIOSSLCertificate]
        do {
            chain = try NIOSSLCertificate.fromPEMBytes(certificatePEM)
        } catch {
            chain = []
        }
        guard let leaf = chain.first else {
            throw TLSFilesError(
                "the TLS certificate file \(certificatePath) holds no PEM certificate (-----BEGIN CERTIFICATE-----); pass the server's certificate chain in PEM"
            )
        }
        let key: NIOSSLPrivateKey
        do {
            key = try NIOSSLPrivateKey(bytes: keyPEM, format: .pem)
        } catch {
            throw TLSFilesError(
                "the TLS private key file \(keyPath) holds no unencrypted PEM private key; pass the certificate's key in PEM, without a passphrase"
            )
        }
        if let matches = Self.keyMatches(String(decoding: keyPEM, as: UTF8.self), leaf), !matches {
            throw TLSFilesError(
                "the TLS private key in \(keyPath) is not the key of the certificate in \(certificatePath); pass the key the certificate was made for"
            )
        }
        var configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(key))
        configuration.minimumTLSVersion = .tlsv12
        return configuration
    }

    /// A file's bytes, or an error saying why it cannot be read.
    private static func read(_ path: String, what: String) throws -> [UInt8] {
        guard FileManager.default.fileExists(atPath: path) else {
            throw TLSFilesError("the \(what) file \(path) does not exist; check the path")
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw TLSFilesError(
                "the \(what) file \(path) cannot be read by this user; let the server's user read it (and nobody else, for a key)"
            )
        }
        return Array(data)
    }

    /// Whether `keyPEM` is the private key of `certificate`'s public key; nil for a kind of key
    /// this check does not know (the TLS handshake then finds out).
    private static func keyMatches(_ keyPEM: String, _ certificate: NIOSSLCertificate) -> Bool? {
        guard let certificateKey = try? certificate.extractPublicKey().toSPKIBytes() else { return nil }
        let publicKey: Data? =
            if let key = try? P256.Signing.PrivateKey(pemRepresentation: keyPEM) {
                key.publicKey.derRepresentation
            } else if let key = try? P384.Signing.PrivateKey(pemRepresentation: keyPEM) {
                key.publicKey.derRepresentation
            } else if let key = try? P521.Signing.PrivateKey(pemRepresentation: keyPEM) {
                key.publicKey.derRepresentation
            } else if let key = try? _RSA.Signing.PrivateKey(pemRepresentation: keyPEM) {
                key.publicKey.derRepresentation
            } else {
                nil
            }
        return publicKey.map { Array($0) == certificateKey }
    }
}

/// TLS files a server cannot use: which file, what is wrong with it, and what to do.
public struct TLSFilesError: Error, CustomStringConvertible {
    public let description: String

    init(_ description: String) {
        self.description = description
    }
}
