import Testing
import UplinkCore
import UplinkTestSupport

@Suite("Classifier: validation modes")
struct ValidationTests {
    func valid(_ status: Int, _ body: String, _ expectation: Expectation, validator: Bool? = nil) -> Bool {
        Classifier.isValid(ProbeResponse(status: status, body: Array(body.utf8), validatorAccepted: validator),
                           for: expectation)
    }

    @Test func defaultStatusIs204WithoutBodyCheckAnd200WithOne() throws {
        #expect(Expectation().status == 204)
        #expect(Expectation().expectsEmptyBody)
        #expect(Expectation(bodyContains: "x").status == 200)
        #expect(Expectation(bodyPattern: try BodyPattern("x")).status == 200)
        #expect(Expectation(bodyEquals: "x", validator: nil).status == 200)
        #expect(Expectation(validator: ValidatorCommand(path: "/bin/true", arguments: [])).status == 204)
        #expect(!Expectation(status: 200).expectsEmptyBody)
    }

    @Test func statusOnly() {
        #expect(valid(200, "anything at all", Expectation(status: 200)))
        #expect(!valid(201, "", Expectation(status: 200)))
        #expect(valid(204, "", Expectation(status: 204)))
        #expect(!valid(200, "", Expectation(status: 204)))
        #expect(!valid(204, "unexpected", Expectation(status: 204)))
    }

    @Test func bodyEqualsToleratesSurroundingWhitespace() {
        let e = Expectation(bodyEquals: "success")
        #expect(valid(200, "success", e))
        #expect(valid(200, "success\n", e))
        #expect(valid(200, "success\r\n", e))
        #expect(!valid(200, "Success", e))
        #expect(!valid(200, "successful", e))
        #expect(!valid(200, "", e))
        #expect(!valid(204, "success", e))
    }

    @Test func bodyContains() {
        let e = Expectation(status: 200, bodyContains: "<BODY>Success</BODY>")
        #expect(valid(200, "<HTML><HEAD><TITLE>Success</TITLE></HEAD><BODY>Success</BODY></HTML>", e))
        #expect(!valid(200, "<HTML><BODY>Login</BODY></HTML>", e))
        #expect(!valid(200, "<body>success</body>", e))
    }

    @Test func bodyRegex() throws {
        let e = Expectation(bodyPattern: try BodyPattern(#"^status: ok \d+$"#))
        #expect(valid(200, "status: ok 42", e))
        #expect(!valid(200, "status: ok x", e))
        #expect(!valid(200, "<html>status: ok 42", e))
        #expect(try BodyPattern("o+k").search("xxoook") == .matched)
        #expect(try BodyPattern("o+k").search("xxk") == .notMatched)
    }

    @Test func invalidRegexThrows() {
        #expect(throws: ValueError("invalid regular expression '(unclosed': missing closing parenthesis at offset 9")) {
            try BodyPattern("(unclosed")
        }
    }

    @Test func validator() {
        let e = Expectation(status: 200, validator: ValidatorCommand(path: "/usr/bin/check", arguments: ["-q"]))
        #expect(valid(200, "x", e, validator: true))
        #expect(!valid(200, "x", e, validator: false))
        #expect(!valid(200, "x", e, validator: nil))
        // Without a validator in the expectation, the field is ignored.
        #expect(valid(200, "x", Expectation(status: 200), validator: false))
    }

    @Test func everyCheckMustPass() throws {
        let e = Expectation(status: 200, bodyEquals: "ok 7", bodyContains: "ok",
                            bodyPattern: try BodyPattern(#"\d"#),
                            validator: ValidatorCommand(path: "/usr/bin/check", arguments: []))
        #expect(valid(200, "ok 7", e, validator: true))
        #expect(!valid(201, "ok 7", e, validator: true))    // status
        #expect(!valid(200, "ok 8", e, validator: true))    // equals
        #expect(!valid(200, "ok 7", e, validator: false))   // validator

        let containsAndRegex = Expectation(bodyContains: "ok", bodyPattern: try BodyPattern(#"^\d+ ok$"#))
        #expect(valid(200, "12 ok", containsAndRegex))
        #expect(!valid(200, "12 fine", containsAndRegex))   // contains fails, regex fails
        #expect(!valid(200, "ok 12", containsAndRegex))     // contains passes, regex fails
    }

    @Test func validatorRejectionIsNotValidInClassification() throws {
        let p = try probe("http://probe.example/v", Expectation(status: 200, validator: ValidatorCommand(path: "/v", arguments: [])))
        #expect(Classifier.classify(response(200, body: "fine", validatorAccepted: true), for: p) == .valid)
        #expect(Classifier.classify(response(200, body: "fine", validatorAccepted: false), for: p) != .valid)
    }
}
