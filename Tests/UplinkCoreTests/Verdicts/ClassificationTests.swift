import Testing
import UplinkCore
import UplinkTestSupport

@Suite("Classifier: probe responses")
struct ClassificationTests {
    let google: ProbeSpec
    let apple: ProbeSpec

    init() throws {
        google = try probe("http://connectivitycheck.gstatic.com/generate_204")
        apple = try probe("http://captive.apple.com/hotspot-detect.html",
                          Expectation(status: 200, bodyContains: "<BODY>Success</BODY>"))
    }

    @Test func empty204IsValid() {
        #expect(Classifier.classify(response(204), for: google) == .valid)
        #expect(Classifier.classify(response(204), for: google).reason == .validated)
    }

    @Test func tiny200Where204ExpectedIsBadProxy() {
        #expect(Classifier.classify(response(200, body: "OK"), for: google) == .broken(reason: .badProxy))
    }

    @Test func non204WithBodyWhere204ExpectedIsNotValid() {
        // A 204 status with a body is not the empty answer expected either.
        #expect(Classifier.classify(response(204, body: "x"), for: google) != .valid)
    }

    @Test func htmlLoginPageWithoutHintIsPortalAtProbeURL() {
        let result = Classifier.classify(response(200, body: loginPage), for: google)
        #expect(result == .portal(reason: .bodyMismatch,
                                  portalURL: "http://connectivitycheck.gstatic.com/generate_204"))
    }

    @Test func largeNonHTMLBodyWhere204ExpectedIsPortal() {
        let body = String(repeating: "x", count: Classifier.tinyBodyBytes + 1)
        #expect(Classifier.classify(response(200, body: body), for: google)
            == .portal(reason: .bodyMismatch, portalURL: "http://connectivitycheck.gstatic.com/generate_204"))
        let tiny = String(repeating: "x", count: Classifier.tinyBodyBytes)
        #expect(Classifier.classify(response(200, body: tiny), for: google) == .broken(reason: .badProxy))
    }

    @Test("design: a 2xx whose body is not the expected one is captive, even when short")
    func shortWrongBodyWhereBodyExpectedIsPortal() throws {
        // The tiny-body "proxy invention" rule is for probes that expect an empty 204
        // (see Expectation.expectsEmptyBody); a body probe answered with another body is captive.
        let firefox = try probe("http://detectportal.firefox.com/success.txt",
                                Expectation(status: 200, bodyEquals: "success"))
        #expect(Classifier.classify(response(200, body: "Please log in"), for: firefox)
            == .portal(reason: .bodyMismatch, portalURL: "http://detectportal.firefox.com/success.txt"))
    }

    // MARK: portal URL hints

    @Test func wisprLoginURLIsExtractedAndEntitiesDecoded() throws {
        let body = """
            <HTML><!--
            <?xml version="1.0" encoding="UTF-8"?>
            <WISPAccessGatewayParam xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
            <Redirect><MessageType>100</MessageType><ResponseCode>0</ResponseCode>
            <LoginURL> https://portal.example.net/login?mac=00:11&amp;ap=lobby </LoginURL>
            </Redirect></WISPAccessGatewayParam>--></HTML>
            """
        #expect(PortalHints.wisprLoginURL(in: body) == "https://portal.example.net/login?mac=00:11&ap=lobby")
        #expect(Classifier.classify(response(200, body: body), for: apple)
            == .portal(reason: .bodyMismatch, portalURL: "https://portal.example.net/login?mac=00:11&ap=lobby"))
    }

    @Test func wisprLoginURLWithCRLFLineEnds() throws {
        let body = "<HTML>\r\n<!--\r\n<WISPAccessGatewayParam>\r\n<Redirect>\r\n<LoginURL>\r\nhttps://portal.example.net/login\r\n</LoginURL>\r\n</Redirect>\r\n</WISPAccessGatewayParam>\r\n-->\r\n</HTML>\r\n"
        #expect(PortalHints.wisprLoginURL(in: body) == "https://portal.example.net/login")
        #expect(Classifier.classify(response(200, body: body), for: apple)
            == .portal(reason: .bodyMismatch, portalURL: "https://portal.example.net/login"))
    }

    @Test func wisprLoginURLNeedsTheGatewayParamBlock() {
        #expect(PortalHints.wisprLoginURL(in: "<LoginURL>http://x.example/</LoginURL>") == nil)
        #expect(PortalHints.wisprLoginURL(in: "<WISPAccessGatewayParam><LoginURL>http://x.example/") == nil)
    }

    @Test func wisprWinsOverMetaRefresh() throws {
        let body = """
            <html><head><meta http-equiv="refresh" content="0; url=http://meta.example/"></head>
            <WISPAccessGatewayParam><LoginURL>http://wispr.example/login</LoginURL></WISPAccessGatewayParam></html>
            """
        #expect(PortalHints.portalURL(in: body, base: try url("http://probe.example/")) == "http://wispr.example/login")
    }

    @Test func metaRefreshDoubleQuoted() {
        let body = #"<html><head><meta http-equiv="refresh" content="0; url=http://portal.example/login?a=1&amp;b=2"></head></html>"#
        #expect(PortalHints.metaRefreshURL(in: body) == "http://portal.example/login?a=1&b=2")
    }

    @Test func metaRefreshCaseInsensitiveKeepsURLCase() {
        let body = #"<HTML><HEAD><META HTTP-EQUIV="Refresh" CONTENT="5;URL=http://Portal.example/Login.PHP"></HEAD></HTML>"#
        #expect(PortalHints.metaRefreshURL(in: body) == "http://Portal.example/Login.PHP")
    }

    @Test func metaRefreshURLInSingleQuotesInsideDoubleQuotedContent() {
        let body = #"<meta http-equiv="refresh" content="0;URL='http://portal.example/welcome'">"#
        #expect(PortalHints.metaRefreshURL(in: body) == "http://portal.example/welcome")
    }

    @Test func metaRefreshSingleQuotedContent() {
        let body = #"<meta http-equiv='refresh' content='0; url=http://portal.example/a/b' />"#
        #expect(PortalHints.metaRefreshURL(in: body) == "http://portal.example/a/b")
    }

    @Test func metaRefreshOtherMetaTagsAreSkipped() {
        let body = #"<meta charset="utf-8"><meta name="viewport" content="width=device-width"><meta http-equiv="refresh" content="1; url=http://portal.example/">"#
        #expect(PortalHints.metaRefreshURL(in: body) == "http://portal.example/")
    }

    @Test("design: unquoted content attribute (HTML allows it; '/' belongs to the value)")
    func metaRefreshUnquotedContent() {
        let body = "<meta http-equiv=refresh content=0;url=http://portal.example/login>"
        #expect(PortalHints.metaRefreshURL(in: body) == "http://portal.example/login")
    }

    @Test("design: unquoted content attribute with a quoted URL inside")
    func metaRefreshUnquotedContentWithQuotedURL() {
        let body = "<META HTTP-EQUIV=Refresh CONTENT=0;URL='http://portal.example/login'>"
        #expect(PortalHints.metaRefreshURL(in: body) == "http://portal.example/login")
    }

    @Test func metaRefreshRelativeURLIsResolvedAgainstProbeURL() throws {
        let base = try url("http://probe.example/check/generate_204?x=1")
        let absolutePath = #"<html><meta http-equiv="refresh" content="0; url=/portal/login"></html>"#
        #expect(PortalHints.portalURL(in: absolutePath, base: base) == "http://probe.example/portal/login")
        let relative = #"<html><meta http-equiv="refresh" content="0; url=portal.html?r=1"></html>"#
        #expect(PortalHints.portalURL(in: relative, base: base) == "http://probe.example/check/portal.html?r=1")

        let p = try probe("http://probe.example/check/generate_204?x=1")
        #expect(Classifier.classify(response(200, body: relative), for: p)
            == .portal(reason: .bodyMismatch, portalURL: "http://probe.example/check/portal.html?r=1"))
    }

    @Test func noHintInPlainPage() throws {
        #expect(PortalHints.portalURL(in: loginPage, base: try url("http://probe.example/")) == nil)
        #expect(PortalHints.looksLikeHTML(loginPage))
        #expect(!PortalHints.looksLikeHTML("OK"))
        #expect(PortalHints.looksLikeHTML("<BODY>hi</BODY>"))
    }

    // MARK: redirects and 511

    @Test(arguments: [301, 302, 303, 307, 308])
    func redirectWithAbsoluteLocationIsPortal(status: Int) {
        #expect(Classifier.classify(response(status, location: "https://portal.example/login?next=x"), for: google)
            == .portal(reason: .redirect, portalURL: "https://portal.example/login?next=x"))
    }

    @Test func redirectWithRelativeLocationIsResolved() throws {
        let p = try probe("http://probe.example:8080/dir/generate_204")
        #expect(Classifier.classify(response(302, location: "/login?from=probe"), for: p)
            == .portal(reason: .redirect, portalURL: "http://probe.example:8080/login?from=probe"))
        #expect(Classifier.classify(response(301, location: "login.html"), for: p)
            == .portal(reason: .redirect, portalURL: "http://probe.example:8080/dir/login.html"))
        #expect(Classifier.classify(response(307, location: " //portal.example/x "), for: p)
            == .portal(reason: .redirect, portalURL: "http://portal.example/x"))
    }

    @Test func redirectWithoutLocationIsBadProxy() {
        #expect(Classifier.classify(response(302), for: google) == .broken(reason: .badProxy))
        #expect(Classifier.classify(response(302, location: "  "), for: google) == .broken(reason: .badProxy))
    }

    @Test func networkAuthRequiredUsesMetaRefreshURL() {
        let body = #"<html><head><meta http-equiv="refresh" content="0; url=https://login.example/auth"></head></html>"#
        #expect(Classifier.classify(response(511, body: body), for: google)
            == .portal(reason: .networkAuthRequired, portalURL: "https://login.example/auth"))
    }

    @Test func networkAuthRequiredWithoutHintUsesProbeURL() {
        #expect(Classifier.classify(response(511, body: "Network Authentication Required"), for: google)
            == .portal(reason: .networkAuthRequired, portalURL: "http://connectivitycheck.gstatic.com/generate_204"))
    }

    // MARK: other statuses and transport failures

    @Test(arguments: [500, 502, 503, 504, 599])
    func serverErrorIsBadProxy(status: Int) {
        #expect(Classifier.classify(response(status, body: "<html>Bad Gateway</html>"), for: google)
            == .broken(reason: .badProxy))
    }

    @Test(arguments: [404, 403, 418, 100])
    func otherStatusIsUnexpected(status: Int) {
        #expect(Classifier.classify(response(status), for: google) == .broken(reason: .unexpectedStatus))
    }

    @Test(arguments: [
        (TransportFailure.dnsFailed, Reason.dnsFailed),
        (.timeout, .timeout),
        (.refused, .refused),
        (.unreachable, .unreachable),
        (.reset, .reset),
        (.tls, .tls),
        (.bindFailed, .bindFailed),
        (.other(code: 7, message: "Couldn't connect"), .error),
    ])
    func transportFailureIsBrokenWithItsReason(failure: TransportFailure, reason: Reason) {
        #expect(failure.reason == reason)
        #expect(Classifier.classify(.failure(failure), for: google) == .broken(reason: reason))
    }
}
