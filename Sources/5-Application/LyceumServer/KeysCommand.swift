import Access
import CommandSyntax
import Security
import ZeroMQ

/// `lyceum keys generate|show`: CURVE certificates in CZMQ's zcert format, with the role and
/// learners Lyceum authorises a key by.
public enum KeysCommand {
    /// `lyceum keys` and its two subcommands.
    public static let declaration = Command(
        "keys", summary: "make and inspect CURVE certificates (CZMQ zcert files) for authorized-keys",
        subcommands: [generate, show])

    private static let generate = Command(
        "generate", summary: "write a new key pair: the public certificate NAME and the secret one NAME_secret (mode 0600)",
        discussion: """
            Give the public file to the broker's authorized-keys directory and the secret file, by a
            private route, to the process that uses the key. Existing files are never replaced.
            exit status: 0 written; 1 not written (a file exists, the directory refused); 2 bad command line
            """,
        options: [
            Option("dir", .text(placeholder: "DIR"), help: "the directory to write the two files in", default: "."),
            Option("role", .choice(Role.allCases.map(\.rawValue)), help: "what the key may do (see docs/security.md)", required: true),
            Option("learners", .text(placeholder: "LIST"), help: "the learners a learner key acts for, comma-separated (at most \(CertificatePrincipal.maximumLearners));\nrequired for --role learner, refused for the others"),
        ],
        positionals: [Positional("NAME", help: "the key's name: its file's name, shown in logs")]
    ) { parsed throws(UsageError) in
        let name = parsed.positionals[0]
        if let refusal = CertificatePrincipal.refusal(ofKeyName: name) { throw UsageError("NAME '\(name)': \(refusal)") }
        guard let role = parsed.text("role").flatMap(Role.init(rawValue:)) else { throw UsageError(option: "role", "is required") }
        var learners: Set<String> = []
        switch (role, parsed.text("learners")) {
        case (.learner, nil): throw UsageError(option: "learners", "is required for --role learner")
        case (.learner, let list?):
            do throws(CertificatePrincipalError) {
                learners = try CertificatePrincipal.learners(from: list)
            } catch {
                throw UsageError(option: "learners", error.message)
            }
        case (_, nil): break
        case (_, _?): throw UsageError(option: "learners", "is only for --role learner, not \(role.rawValue)")
        }
        let path = (parsed.text("dir") ?? ".") + "/" + name
        let principal = Principal(name: name, role: role, learners: learners)
        do {
            let certificate = CurveCertificate(keyPair: try CurveKeyPair.generate(), metadata: CertificatePrincipal.metadata(for: principal))
            try certificate.save(to: path)
            print("public-key: \(certificate.publicKeyText)")
            print("public:     \(path)")
            print("secret:     \(CurveCertificate.secretPath(for: path))")
            return 0
        } catch {
            printError("lyceum keys generate: \(error)")
            return 1
        }
    }

    private static let show = Command(
        "show", summary: "print a certificate's name, role, learners and public key (never its secret key)",
        discussion: "exit status: 0 a certificate authorized-keys would accept; 1 unreadable, or not one a KeyRing would load; 2 bad command line",
        positionals: [Positional("FILE", help: "a public certificate NAME or a secret one NAME_secret")]
    ) { parsed in
        let path = parsed.positionals[0]
        let file = path.split(separator: "/").last.map(String.init) ?? path
        let name = file.hasSuffix(CurveCertificate.secretSuffix) ? String(file.dropLast(CurveCertificate.secretSuffix.count)) : file
        let certificate: CurveCertificate
        do {
            certificate = try CurveCertificate.load(from: path)
        } catch {
            printError("lyceum keys show: \(error)")
            return 1
        }
        let principal = Result { () throws(CertificatePrincipalError) in
            try CertificatePrincipal.principal(named: name, metadata: certificate.metadata)
        }
        print("name:        \(name)")
        if case .success(let principal) = principal {
            print("role:        \(principal.role.rawValue)")
            if principal.role == .learner { print("learners:    \(principal.learners.sorted().joined(separator: ","))") }
        }
        print("public-key:  \(certificate.publicKeyText)")
        print("certificate: \(certificate.secretKey == nil ? "public" : "secret (its secret key is not shown)")")
        guard case .failure(let error) = principal else { return 0 }
        let line = certificate.line(ofMetadata: error.metadata).map { ":\($0)" } ?? ""
        printError("lyceum keys show: \(path)\(line): \(error) (authorized-keys would skip this certificate)")
        return 1
    }
}
