import Testing
import UplinkCore
import UplinkTestSupport

@Suite("DNS through a local cache")
struct LocalCacheTests {
    @Test func loopbackServersAreAskedUnboundAndDroppedWhenBound() {
        let stub = DNSServers(source: .resolvConf, addresses: [IPAddress("127.0.0.53")!])
        #expect(!stub.bindsToInterface)
        #expect(stub.ordered(for: .ipv4) == [IPAddress("127.0.0.53")!])
        let mixed = DNSServers(source: .resolvConf, addresses: [IPAddress("127.0.0.1")!, IPAddress("192.0.2.1")!])
        #expect(mixed.bindsToInterface)
        #expect(mixed.ordered(for: .ipv4) == [IPAddress("192.0.2.1")!])
    }
}
