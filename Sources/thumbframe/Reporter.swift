// Built with the CommandLine trait (the default); without it, WithoutCommandLine.swift.
#if CommandLine
    import ArgumentParser
    import Foundation
    import ThumbframeCore
    import ThumbframeManifest

    /// How diagnostics are written on stderr.
    enum LogFormat: String, ExpressibleByArgument, CaseIterable {
        /// One sentence per line, for people.
        case text
        /// One JSON object per line (`{"event": …, "level": …, "time": …}`), for machines.
        case json
    }

    /// Renders a build's events on stderr: failures and warnings as they happen, and a progress line
    /// (files done/total, rate, ETA) redrawn in place when asked for or when stderr is a terminal.
    /// A class: it keeps the progress line's state between events, which arrive from the build's
    /// tasks; the lock makes that safe.
    final class Reporter: @unchecked Sendable {
        let format: LogFormat
        let quiet: Bool
        /// The failures that decide the exit code (`--fail-on`): printed even when quiet, so cron,
        /// which mails what a job prints, mails exactly when the exit code says something is wrong.
        let deciding: FailOn
        let showProgress: Bool
        private let lock = NSLock()
        private let started = Date()
        private var lastDrawn = Date.distantPast
        private var lineOnScreen = false
        /// Whether stderr is a terminal: the progress line is redrawn in place there, and written as
        /// plain lines (no escape codes) into a file or a pipe.
        private let onTerminal: Bool

        init(format: LogFormat, quiet: Bool, progress: Bool?, deciding: FailOn = .any) {
            self.format = format
            self.quiet = quiet
            self.deciding = deciding
            // Progress: never when quiet; when neither asked nor refused, only on a terminal.
            self.onTerminal = isatty(STDERR_FILENO) == 1
            self.showProgress = !quiet && (progress ?? onTerminal)
        }

        func handle(_ event: BuildEvent) {
            lock.lock()
            defer { lock.unlock() }
            switch event {
            case .failure(let failure, let new):
                guard !quiet || deciding.counts(new: new) else { return }
                emit(
                    json: ["event": "failure", "path": failure.path, "stage": failure.stage, "reason": failure.reason, "new": new],
                    text: TerminalText.safe(event.description))
            case .warning(let message):
                guard !quiet else { return }
                emit(json: ["event": "warning", "message": message], text: TerminalText.safe(message))
            case .progress(let done, let total):
                guard showProgress else { return }
                let now = Date()
                // Redraw at most five times a second on a terminal (JSON: once a second; plain lines
                // into a file: every five seconds), and always at the end.
                let interval = format == .json ? 1.0 : onTerminal ? 0.2 : 5.0
                guard done == total || now.timeIntervalSince(lastDrawn) >= interval else { return }
                lastDrawn = now
                let elapsed = now.timeIntervalSince(started)
                let rate = elapsed > 0 ? Double(done) / elapsed : 0
                let eta = rate > 0 ? Double(total - done) / rate : 0
                switch format {
                case .json:
                    write(
                        Self.json(
                            Self.stamped([
                                "event": "progress", "done": done, "total": total,
                                "rate": (rate * 10).rounded() / 10, "eta": eta.rounded(),
                            ])))
                case .text:
                    let line = "[\(done)/\(total)] \(String(format: "%.1f", rate)) files/s, ETA \(Self.duration(eta))"
                    if onTerminal {
                        StandardError.write("\r\u{1B}[K" + line)
                        lineOnScreen = true
                    } else {
                        write(line)
                    }
                }
            }
        }

        /// The closing summary of a build.
        func summary(_ report: BuildReport) {
            lock.lock()
            defer { lock.unlock() }
            guard !quiet else { return }
            let causes = FailureCause.counts(report.failures)
            emit(
                json: [
                    "event": "summary", "manifest": report.manifestPath, "items": report.items, "sections": report.sections,
                    "failures": report.failures.count, "newFailures": report.newFailures, "reused": report.reused,
                    "thumbnailsWritten": report.thumbnailsWritten,
                    "pruned": report.pruned, "manifestWritten": report.manifestWritten,
                    "sectionsAssembled": report.sectionsAssembled, "rediagnosed": report.rediagnosed, "skipped": report.skipped,
                    "failed": causes,
                    "recipes": report.recipeBytes.map { ["name": $0.name, "count": $0.count, "bytes": $0.bytes] as [String: Any] },
                ],
                text: "thumbframe: \(report.items) items in \(report.sections) sections, \(report.failures.count) failed"
                    + FailureCause.text(causes, new: report.newFailures) + ", "
                    + Self.skippedText(report.skipped)
                    + "\(report.reused) reused, \(report.thumbnailsWritten) thumbnails written, \(report.pruned) pruned, "
                    + "manifest \(report.manifestWritten ? "written" : "unchanged")"
                    + (report.recipeBytes.isEmpty ? "" : "\nthumbframe: thumbnails \(RecipeBytes.text(report.recipeBytes))"))
        }

        /// `3 skipped (2 video, 1 sidecar), ` — nothing when nothing was skipped.
        static func skippedText(_ skipped: [String: Int]) -> String {
            guard !skipped.isEmpty else { return "" }
            let kinds = skipped.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", ")
            return "\(skipped.values.reduce(0, +)) skipped (\(kinds)), "
        }

        /// A sentence about the whole run (`--check`'s verdict, a signal).
        func note(_ message: String) {
            lock.lock()
            defer { lock.unlock() }
            guard !quiet else { return }
            emit(json: ["event": "note", "message": message], text: "thumbframe: \(TerminalText.safe(message))")
        }

        /// A fatal error: printed even when quiet.
        func error(_ message: String, exitCode: Int32) {
            lock.lock()
            defer { lock.unlock() }
            emit(
                json: ["event": "error", "message": message, "exitCode": Int(exitCode)],
                text: "thumbframe: error: \(TerminalText.safe(message))")
        }

        private func emit(json object: [String: Any], text: String) {
            write(format == .json ? Self.json(Self.stamped(object)) : text)
        }

        /// A JSON event with its time (UTC, milliseconds) and level: `error` for fatal errors and
        /// files that failed, `warning`, and `info` for the rest.
        static func stamped(_ object: [String: Any]) -> [String: Any] {
            var object = object
            let level: String
            switch object["event"] as? String {
            case "error", "failure": level = "error"
            case "warning": level = "warning"
            default: level = "info"
            }
            object["level"] = level
            object["time"] = timestamp.string(from: Date())
            return object
        }

        nonisolated(unsafe) private static let timestamp: ISO8601DateFormatter = {
            let formatter = ISO8601DateFormatter()
            formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            return formatter
        }()

        private func write(_ line: String) {
            if lineOnScreen {
                // Clear the progress line; the next progress event draws it again below.
                StandardError.write("\r\u{1B}[K")
                lineOnScreen = false
            }
            StandardError.write(line + "\n")
        }

        /// Clears the progress line for good.
        func finish() {
            lock.lock()
            defer { lock.unlock() }
            if lineOnScreen {
                StandardError.write("\r\u{1B}[K")
                lineOnScreen = false
            }
        }

        static func json(_ object: [String: Any]) -> String {
            guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
            else { return "{\"event\":\"error\",\"message\":\"unencodable event\"}" }
            return String(decoding: data, as: UTF8.self)
        }

        /// `m:ss` or `h:mm:ss`.
        static func duration(_ seconds: Double) -> String {
            let total = Int(seconds.rounded())
            let (hours, minutes, secs) = (total / 3600, total / 60 % 60, total % 60)
            let mmss = String(format: "%02d:%02d", minutes, secs)
            return hours > 0 ? "\(hours):\(mmss)" : String(format: "%d:%02d", minutes, secs)
        }
    }

    /// Writes to stderr with write(2), dropping what cannot be written: a closed stderr, a full log
    /// disk or a pipe whose reader died must never stop a build (Foundation's FileHandle traps on
    /// such errors).
    enum StandardError {
        static func write(_ text: String) {
            var bytes = Array(text.utf8)
            var offset = 0
            while offset < bytes.count {
                let written = bytes.withUnsafeMutableBytes { Foundation.write(STDERR_FILENO, $0.baseAddress! + offset, $0.count - offset) }
                if written < 0, errno == EINTR { continue }
                if written <= 0 { return }
                offset += written
            }
        }
    }

    /// What a long-running command does first: SIGPIPE ignored (a dead reader of stdout or stderr
    /// becomes a failed write, not a dead build), and descriptors 0–2 open (on /dev/null when
    /// the caller closed them), so no file the build opens can become "stderr" and receive its
    /// diagnostics.
    enum ProcessHygiene {
        static func prepare() {
            signal(SIGPIPE, SIG_IGN)
            for fd in [STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO] where fcntl(fd, F_GETFD) < 0 && errno == EBADF {
                let null = open("/dev/null", fd == STDIN_FILENO ? O_RDONLY : O_WRONLY)
                if null >= 0, null != fd {
                    dup2(null, fd)
                    close(null)
                }
            }
        }
    }
#endif
