import Glibc
import UplinkCore
import UplinkLinux

/// `uplinkd resolve IFACE NAME [--family 4|6] [--config FILE]`: NAME's addresses
/// through IFACE's own DNS servers, found and asked exactly as its probes do (never
/// the system resolver), one a line, IPv4 first. For hooks that must reach a host
/// behind that uplink, above all a portal's login page (`curl --resolve`). Exit 0,
/// 1 when the name has no address, 64 usage, 69 no such interface or no DNS server
/// known for it, 78 configuration error.
enum ResolveCommand {
    static func run(_ arguments: ArraySlice<String>) -> Int32 {
        var configPath: String?
        var families = AddressFamily.allCases
        var positional: [String] = []
        let early = ArgumentReader.readOptions(arguments, for: "resolve") { option, inline, reader throws(UsageError) in
            switch option {
            case "--config": configPath = try reader.value(for: option, inline: inline)
            case "--family":
                switch try reader.value(for: option, inline: inline) {
                case "4": families = [.ipv4]
                case "6": families = [.ipv6]
                case let other: throw UsageError("--family: '\(other.printableEscaped)' is not 4 or 6")
                }
            default:
                guard !option.hasPrefix("-") || option == "-" else { return false }
                positional.append(option)
            }
            return true
        }
        if let early { return early }
        guard positional.count == 2 else {
            return usageFailure("resolve needs IFACE and NAME, got \(positional.count) argument(s)")
        }
        guard let interface = InterfaceName(positional[0]) else {
            return usageFailure("resolve: \(InterfaceName.problem(with: positional[0]) ?? "bad interface name")")
        }
        let name = positional[1]
        if let literal = IPAddress(name) {
            return printLiteral(literal, name: name, families: families)
        }
        guard HostName.isValid(name) else {
            return usageFailure("resolve: '\(name.printableEscaped)' is not a host name")
        }
        guard let configuration = loadConfigurationOrReport(explicitPath: configPath) else {
            return ExitStatus.configuration
        }
        return resolve(name, families: families, through: interface, configuration: configuration)
    }

    /// A literal needs no DNS: printed back, as `curl --resolve` may take it.
    private static func printLiteral(_ literal: IPAddress, name: String, families: [AddressFamily]) -> Int32 {
        guard families.contains(literal.family) else {
            printError("\(name.printableEscaped) is not an address of the asked family")
            return 1
        }
        print(literal)
        return 0
    }

    /// The network's part, kept apart from reading the command line: everything
    /// before it fails without sending a packet.
    private static func resolve(_ name: String, families: [AddressFamily], through interface: InterfaceName,
                                configuration: Configuration) -> Int32 {
        let lookup = UplinkNameLookup(configuration: configuration)
        guard let servers = ownServers(of: interface, lookup: lookup) else {
            return ExitStatus.unavailable
        }
        let answers: [AddressFamily: Result<DNSAnswer, DNSFailure>]
        do {
            answers = try lookup.resolve(name, families: families, interface: interface, servers: servers)
        } catch {
            printError("resolve failed: \(error)")
            return ExitStatus.software
        }
        return printAnswers(answers, for: name, families: families, through: interface, servers: servers)
    }

    /// Only the uplink's own servers may answer for it; nil (the reason printed) when
    /// it has none.
    private static func ownServers(of interface: InterfaceName, lookup: UplinkNameLookup) -> DNSServers? {
        let index = UplinkNameLookup.index(of: interface)
        guard index > 0 else {
            printError("no interface \(interface)")
            return nil
        }
        let servers = lookup.servers(for: interface, index: index)
        guard !servers.reachable.isEmpty else {
            printError("no DNS server known for \(interface) (sources: "
                       + DNSSource.allCases.filter { lookup.configuration.dns.sources.contains($0) }.map(\.rawValue)
                           .joined(separator: ", ") + ")")
            return nil
        }
        // The system's servers (resolv.conf, a local cache) answer through the primary:
        // for a backup behind a portal that is the wrong network's answer, and the
        // question would leave through another uplink.
        guard servers.isPerUplink else {
            printError("no DNS server of \(interface)'s own (only \(servers.origin ?? "resolv.conf")'s, which answer "
                       + "through the primary); name its servers with [interface \(interface)] dns")
            return nil
        }
        return servers
    }

    /// Hooks read the addresses from standard output, one a line and IPv4 first; why
    /// there are none goes to standard error, with the exit status 1 they test for.
    private static func printAnswers(_ answers: [AddressFamily: Result<DNSAnswer, DNSFailure>], for name: String,
                                     families: [AddressFamily], through interface: InterfaceName,
                                     servers: DNSServers) -> Int32 {
        var printed = 0
        var failures: [String] = []
        for family in families {
            switch answers[family] {
            case .success(let answer)?:
                for address in answer.addresses where address.family == family {
                    print(address)
                    printed += 1
                }
            case .failure(let failure)?:
                failures.append("\(family.rawValue): \(failure)")
            case nil:
                failures.append("\(family.rawValue): no answer")
            }
        }
        guard printed > 0 else {
            let servers = servers.reachable.map(\.description).joined(separator: ", ")
            printError("\(name) has no address through \(interface) (servers \(servers); "
                       + (failures.isEmpty ? "empty answer" : failures.joined(separator: "; ")) + ")")
            return 1
        }
        return 0
    }
}
