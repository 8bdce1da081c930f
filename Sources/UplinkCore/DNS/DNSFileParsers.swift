/// Readers of the files other network managers leave behind, each turned into the
/// DNS servers of one interface. Pure: the adapter reads the files (bounded) and
/// passes the text in. Malformed content yields no servers, never an error: these
/// files are someone else's, and the next source is tried.
package enum DNSFileParsers {
    /// systemd-networkd's `/run/systemd/netif/links/IFINDEX`: `DNS=a b c`.
    package static func networkdLinkState(_ text: String) -> [IPAddress] {
        servers(inKey: "DNS", of: text)
    }

    /// systemd-resolved's `/run/systemd/resolve/netif/IFINDEX`: `SERVERS=a b c`.
    package static func resolvedLinkState(_ text: String) -> [IPAddress] {
        servers(inKey: "SERVERS", of: text)
    }

    /// A systemd-style DHCP lease (NetworkManager's internal client): `DNS=a b c`.
    package static func systemdLease(_ text: String) -> [IPAddress] {
        servers(inKey: "DNS", of: text)
    }

    /// `nameserver ADDRESS` lines of a resolv.conf (also resolvconf's per-interface files).
    package static func resolvConf(_ text: String) -> [IPAddress] {
        var result: [IPAddress] = []
        for line in text.split(whereSeparator: { $0 == "\n" }) {
            let words = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard words.count >= 2, words[0] == "nameserver", let address = server(String(words[1])) else { continue }
            append(address, to: &result)
        }
        return result
    }

    /// ISC dhclient lease files: the servers of the last `lease {}` (DHCPv4, `option
    /// domain-name-servers a, b;`) and of the last `lease6 {}` (DHCPv6, `option
    /// dhcp6.name-servers a,b;`) of the interface; dhclient appends, so last is newest.
    package static func dhclientLeaseServers(_ text: String, interface: String) -> (dhcp4: [IPAddress], dhcp6: [IPAddress]) {
        let leases = DhclientLeaseFile.lastLeases(text, interface: interface)
        return (leaseServers(leases.dhcp4), leaseServers(leases.dhcp6))
    }

    private static func leaseServers(_ lines: [String]) -> [IPAddress] {
        var result: [IPAddress] = []
        for line in lines where line.hasPrefix("option domain-name-servers ") || line.hasPrefix("option dhcp6.name-servers ") {
            let list = line.split(separator: " ", maxSplits: 2).last.map(String.init) ?? ""
            for item in list.trimmingCharacters(";").split(separator: ",") {
                if let address = server(String(item).trimmingWhitespace) { append(address, to: &result) }
            }
        }
        return result
    }

    /// One server as these files write it: `1.2.3.4`, `1.2.3.4:53`, `2001:db8::1`,
    /// `[2001:db8::1]:53`, `fe80::1%eth0`, optionally followed by `#server-name`.
    /// A server on another port than 53 is left out (queries always use 53).
    package static func server(_ token: String) -> IPAddress? {
        var text = Substring(token)
        if let hash = text.firstIndex(of: "#") { text = text[..<hash] }
        var port: Substring?
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { return nil }
            let after = text[text.index(after: close)...]
            if after.hasPrefix(":") { port = after.dropFirst() }
            text = text[text.index(after: text.startIndex)..<close]
        } else if text.filter({ $0 == ":" }).count == 1 {
            let colon = text.firstIndex(of: ":")!
            port = text[text.index(after: colon)...]
            text = text[..<colon]
        }
        if let port {
            let digits = port.prefix { $0 != "%" }
            guard digits == "53" else { return nil }
        }
        if let percent = text.firstIndex(of: "%") { text = text[..<percent] }
        guard let address = IPAddress(String(text)), !address.isUnspecified else { return nil }
        return address
    }

    private static func servers(inKey key: String, of text: String) -> [IPAddress] {
        var result: [IPAddress] = []
        for line in text.split(whereSeparator: { $0 == "\n" }) where line.hasPrefix(key + "=") {
            for word in line.dropFirst(key.count + 1).split(separator: " ") {
                if let address = server(String(word)) { append(address, to: &result) }
            }
        }
        return result
    }

    private static func append(_ address: IPAddress, to list: inout [IPAddress]) {
        if !list.contains(address) { list.append(address) }
    }
}
