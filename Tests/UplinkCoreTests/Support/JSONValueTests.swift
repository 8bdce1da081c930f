import Testing
import UplinkCore
import UplinkTestSupport

@Suite("JSONValue")
struct JSONValueTests {
    @Test func escapesStrings() {
        #expect(JSONValue.string("plain").serialized() == #""plain""#)
        #expect(JSONValue.string("say \"hi\"").serialized() == #""say \"hi\"""#)
        #expect(JSONValue.string(#"C:\dir"#).serialized() == #""C:\\dir""#)
        #expect(JSONValue.string("a\nb\rc\td").serialized() == #""a\nb\rc\td""#)
        #expect(JSONValue.string("\u{0}\u{1}\u{8}\u{c}\u{1b}\u{1f}").serialized() == #""\u0000\u0001\u0008\u000c\u001b\u001f""#)
        #expect(JSONValue.string("\u{7f}").serialized() == #""\u007f""#)
        #expect(JSONValue.string(" ~/é✓").serialized() == "\" ~/é✓\"")
    }

    @Test func serializesScalarsArraysAndObjectsInOrder() {
        #expect(JSONValue.null.serialized() == "null")
        #expect(JSONValue.bool(true).serialized() == "true")
        #expect(JSONValue.bool(false).serialized() == "false")
        #expect(JSONValue.int(-42).serialized() == "-42")
        #expect(JSONValue.optional(nil).serialized() == "null")
        #expect(JSONValue.optional("x").serialized() == #""x""#)
        #expect(JSONValue.array([]).serialized() == "[]")
        #expect(JSONValue.object([]).serialized() == "{}")
        let value = JSONValue.object([
            ("z", .int(1)),
            ("a\"key", .array([.null, .bool(true), .string("s")])),
            ("nested", .object([("k", .int(0))])),
        ])
        #expect(value.serialized() == #"{"z":1,"a\"key":[null,true,"s"],"nested":{"k":0}}"#)
    }
}
