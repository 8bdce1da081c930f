import CPCRE2Shim

/// A regular expression (PCRE2 syntax) compiled and searched within fixed bounds of
/// work and memory: the pattern comes from the configuration and the subject from the
/// network, and neither may crash or stall the one loop that runs the agent.
///
/// Compiling refuses patterns longer than `Limits.patternBytes` or nested deeper than
/// `Limits.parenthesesDepth`. A search stops, undecided, after `Limits.steps` steps (a
/// pattern item tried, or one byte moved over) over all start positions together,
/// `Limits.backtracksPerStart` backtracks from one start position, or `Limits.heapKiB`
/// of backtracking memory.
// @unchecked: the only state is the compiled program, written once by `init` and
// freed by `deinit`; PCRE2 documents that a compiled pattern may be matched from
// several threads at once (each search has its own match data).
package final class BoundedRegex: @unchecked Sendable {
    /// The bounds of compiling and searching.
    package struct Limits: Sendable, Equatable {
        package var patternBytes: Int
        package var parenthesesDepth: Int
        /// Over the whole search: a pattern item tried, or one byte moved over.
        package var steps: Int
        /// PCRE2's match limit: backtracks from any one start position.
        package var backtracksPerStart: Int
        package var heapKiB: Int

        package init(patternBytes: Int, parenthesesDepth: Int, steps: Int, backtracksPerStart: Int, heapKiB: Int) {
            self.patternBytes = patternBytes
            self.parenthesesDepth = parenthesesDepth
            self.steps = steps
            self.backtracksPerStart = backtracksPerStart
            self.heapKiB = heapKiB
        }

        /// What body checks use. A search that reads the largest body (64 KiB) once
        /// costs about 100,000 steps: the budget leaves ten times that and stops the
        /// quadratic patterns within milliseconds; exponential ones stop sooner, at
        /// 100,000 backtracks from their first start. 1 MiB holds the backtracking
        /// frames of a group repeated over a 4 KiB body.
        package static let standard = Limits(patternBytes: 1_024, parenthesesDepth: 64, steps: 1_000_000,
                                            backtracksPerStart: 100_000, heapKiB: 1_024)
    }

    /// How a search ended.
    package enum Outcome: Sendable, Equatable {
        case matched
        case notMatched
        /// The step budget ran out before the search could decide.
        case stepLimit
        /// The backtracking memory bound was reached (or memory ran out).
        case memoryLimit
        /// Another PCRE2 error, by its code; none is expected with these options.
        case failed(code: Int)
    }

    /// Why a pattern was refused, worded for an error message.
    package struct CompileError: Error, Sendable, Equatable {
        package let message: String
        /// Where in the pattern (bytes), when PCRE2 says.
        package let offset: Int?

        package var description: String { offset.map { "\(message) at offset \($0)" } ?? message }
    }

    package let source: String
    package let limits: Limits
    private let program: OpaquePointer

    package init(_ source: String, limits: Limits = .standard) throws(CompileError) {
        let bytes = Array(source.utf8)
        // Checked before PCRE2 sees it, for a message that gives both sizes.
        guard bytes.count <= limits.patternBytes else {
            throw CompileError(message: "\(bytes.count) bytes, longer than the \(limits.patternBytes) allowed", offset: nil)
        }
        var errorCode: Int32 = 0
        var errorOffset = 0
        let compiled = bytes.withUnsafeBufferPointer { buffer in
            uplinkd_regex_compile(buffer.baseAddress, buffer.count, UInt32(limits.patternBytes),
                                  UInt32(limits.parenthesesDepth), &errorCode, &errorOffset)
        }
        guard let compiled else {
            throw CompileError(message: Self.message(for: errorCode), offset: errorOffset)
        }
        self.source = source
        self.limits = limits
        self.program = compiled
    }

    deinit { uplinkd_regex_free(program) }

    /// Whether the pattern matches anywhere in `subject`. Invalid UTF-8 in the subject
    /// is never matched by anything, and is no error.
    package func search(_ subject: [UInt8]) -> Outcome { searchCountingSteps(subject).outcome }

    /// `search`, with the number of steps it took (for tests and benchmarks).
    package func searchCountingSteps(_ subject: [UInt8]) -> (outcome: Outcome, steps: Int) {
        var steps: UInt64 = 0
        var errorCode: Int32 = 0
        let result = subject.withUnsafeBufferPointer { buffer in
            uplinkd_regex_match(program, buffer.baseAddress, buffer.count, UInt64(limits.steps),
                                UInt32(limits.backtracksPerStart), UInt32(limits.heapKiB), &steps, &errorCode)
        }
        let outcome: Outcome
        switch result {
        case uplinkd_regex_matched: outcome = .matched
        case uplinkd_regex_not_matched: outcome = .notMatched
        case uplinkd_regex_step_limit: outcome = .stepLimit
        case uplinkd_regex_memory_limit: outcome = .memoryLimit
        default: outcome = .failed(code: Int(errorCode))
        }
        return (outcome, Int(steps))
    }

    /// PCRE2's own text for an error code.
    static func message(for code: Int32) -> String {
        var buffer = [UInt8](repeating: 0, count: 256)
        let length = buffer.withUnsafeMutableBufferPointer { uplinkd_regex_error_message(code, $0.baseAddress, $0.count) }
        guard length > 0 else { return "PCRE2 error \(code)" }
        return String(decoding: buffer.prefix(Int(length)), as: UTF8.self)
    }
}
