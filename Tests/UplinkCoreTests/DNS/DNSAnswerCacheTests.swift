import Testing
import UplinkCore
import UplinkTestSupport

@Suite("DNSAnswerCache: answers reused within their TTL")
struct DNSAnswerCacheTests {
    let key = DNSAnswerCache.Key(host: "connectivitycheck.gstatic.com", family: .ipv4)
    let bounds = 30_000...3_600_000

    @Test func keptForTheTTL() {
        var cache = DNSAnswerCache()
        cache.store(addresses("203.0.113.80"), for: key, ttlSeconds: 300, at: 1_000, bounds: bounds)
        #expect(cache.answers(at: 300_999)[key] == addresses("203.0.113.80"))
        #expect(cache.answers(at: 301_000)[key] == nil)
    }

    @Test func boundedBelowAndAbove() {
        var cache = DNSAnswerCache()
        cache.store(addresses("203.0.113.80"), for: key, ttlSeconds: 0, at: 0, bounds: bounds)
        #expect(cache.answers(at: 29_999)[key] != nil)
        #expect(cache.answers(at: 30_000)[key] == nil)
        cache.store(addresses("203.0.113.80"), for: key, ttlSeconds: 86_400, at: 0, bounds: bounds)
        #expect(cache.answers(at: 3_599_999)[key] != nil)
        #expect(cache.answers(at: 3_600_000)[key] == nil)
    }

    @Test func clearForgetsEverything() {
        var cache = DNSAnswerCache()
        cache.store(addresses("203.0.113.80"), for: key, ttlSeconds: 300, at: 0, bounds: bounds)
        cache.clear()
        #expect(cache.answers(at: 1).isEmpty)
    }
}
