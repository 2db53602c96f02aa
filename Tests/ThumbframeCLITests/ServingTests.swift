import Foundation
import Testing
import ThumbframeTestSupport

/// OUT_DIR served as docs/frontends.md says (issue 54, item 7): the site, its pre-compressed
/// siblings, and none of thumbframe's dot files (the state index holds every file's path).
@Suite("Serving OUT_DIR", .enabled(if: Processes.tool("caddy") != nil, "needs caddy (scripts/bootstrap --test)"))
struct ServingTests {
    /// The documentation's block of `language` (the first).
    static func documented(_ language: String) throws -> String {
        let text = try String(contentsOfFile: Fixtures.packageRoot + "/docs/frontends.md", encoding: .utf8)
        let start = try #require(text.range(of: "```" + language + "\n"))
        let end = try #require(text.range(of: "\n```", range: start.upperBound..<text.endIndex))
        return String(text[start.upperBound..<end.lowerBound])
    }

    /// A --viewer build of three photos in `root/out`: OUT_DIR, one of its pages, and its dot files
    /// (the state index and the lock among them).
    static func built(_ root: String) async throws -> (out: String, page: String, dotFiles: [String]) {
        let lib = root + "/lib"
        try Fixtures.makeLibrary(lib, Fixtures.photos(3, in: ["a"], width: 120, height: 90))
        let out = root + "/out"
        #expect(try await CLITests.run(["build", lib, "--out", out, "--viewer"]).status == 0)
        let dotFiles = try FileManager.default.contentsOfDirectory(atPath: out).filter { $0.hasPrefix(".") }
        #expect(dotFiles.contains(".thumbframe-state.sqlite") && dotFiles.contains(".thumbframe.lock"), "\(dotFiles)")
        let page = try #require(FileManager.default.subpaths(atPath: out + "/pages")?.first { $0.hasSuffix(".json") })
        return (out, "pages/" + page, dotFiles)
    }

    /// Each path's HTTP status and Content-Encoding, asked with `Accept-Encoding: br, gzip`.
    static func ask(_ base: String, _ paths: [String]) async throws -> [String: String] {
        let script = """
            import sys, urllib.request, urllib.error
            for path in sys.argv[2:]:
                request = urllib.request.Request(sys.argv[1] + path, headers={"Accept-Encoding": "br, gzip"})
                try:
                    with urllib.request.urlopen(request, timeout=10) as response:
                        print(path, response.status, response.headers.get("Content-Encoding") or "-")
                except urllib.error.HTTPError as error:
                    print(path, error.code, "-")
            """
        let run = try await Processes.run("/usr/bin/env", ["python3", "-c", script, base] + paths)
        #expect(run.status == 0, "\(run.stderr)")
        var answers: [String: String] = [:]
        for line in run.stdout.split(separator: "\n") {
            let fields = line.split(separator: " ")
            if fields.count == 3 { answers[String(fields[0])] = "\(fields[1]) \(fields[2])" }
        }
        return answers
    }

    @Test("the documented Caddy configuration serves the site and its .br siblings, and refuses every dot file of OUT_DIR")
    func caddy() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            let (out, page, dotFiles) = try await Self.built(root)

            let site = try Self.documented("caddyfile")
            #expect(site.contains("/srv/www/photos") && site.contains("photos.example.org"))
            // Started on a free port; again on another when it exits first (a port another test
            // took meanwhile), its stderr kept for the failure's message.
            var started: (server: Process, port: Int)?
            var logs: [String] = []
            for attempt in 0..<3 where started == nil {
                let port = try Processes.freePort()
                let config =
                    "{\n\tadmin off\n\tauto_https off\n}\n"
                    + site.replacingOccurrences(of: "photos.example.org", with: "http://127.0.0.1:\(port)")
                    .replacingOccurrences(of: "/srv/www/photos", with: out)
                try Fixtures.write(Array(config.utf8), to: root + "/Caddyfile")
                let server = Process()
                server.executableURL = URL(fileURLWithPath: try #require(Processes.tool("caddy")))
                server.arguments = ["run", "--config", root + "/Caddyfile", "--adapter", "caddyfile"]
                server.environment = ["HOME": root, "PATH": "/usr/bin:/bin"]
                server.standardOutput = FileHandle.nullDevice
                _ = FileManager.default.createFile(atPath: root + "/caddy-\(attempt).log", contents: nil)
                server.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: root + "/caddy-\(attempt).log"))
                try server.run()
                if try await Processes.waitForPort(port, seconds: 120, while: { server.isRunning }) {
                    started = (server, port)
                } else {
                    let log = (try? String(contentsOfFile: root + "/caddy-\(attempt).log", encoding: .utf8)) ?? ""
                    logs.append("port \(port): \(log.suffix(600))")
                    if server.isRunning { server.terminate() }
                }
            }
            let (server, port) = try #require(started, "caddy did not serve: \(logs)")
            defer {
                server.terminate()
                server.waitUntilExit()
            }

            let base = "http://127.0.0.1:\(port)/"
            let published = ["manifest.json", "index.html", page]
            let hidden = dotFiles + dotFiles.map { "pages/../" + $0 }
            let answers = try await Self.ask(base, published + hidden)
            for path in published { #expect(answers[path] == "200 br", "\(path): \(answers[path] ?? "no answer")") }
            for path in hidden { #expect(answers[path]?.hasPrefix("404") == true, "\(path): \(answers[path] ?? "no answer")") }
        }
    }

    @Test(
        "the documented nginx configuration serves the site and its .gz siblings, and refuses every dot file of OUT_DIR",
        .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/sbin/nginx") && getuid() == 0, "needs nginx, run as root"))
    func nginx() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            let (out, page, dotFiles) = try await Self.built(root)
            var site = try Self.documented("nginx")
            #expect(site.contains("root /srv/www/photos;") && site.contains("location ~ /\\. { return 404; }"))
            // Debian's nginx-light has gzip_static, not the ngx_brotli module the comment names.
            site = site.split(separator: "\n").map { $0.replacingOccurrences(of: " brotli_static on;", with: "") }
                .joined(separator: "\n")
            let port = try Processes.freePort()
            let config = """
                daemon off; user root; pid \(root)/nginx.pid; error_log \(root)/nginx.log;
                events {}
                http {
                  include /etc/nginx/mime.types; access_log off; client_body_temp_path \(root)/body; proxy_temp_path \(root)/proxy;
                  fastcgi_temp_path \(root)/fastcgi;
                \(site.replacingOccurrences(of: "/srv/www/photos", with: out)
                    .replacingOccurrences(of: "server {", with: "server {\n    listen 127.0.0.1:\(port);"))
                }
                """
            try Fixtures.write(Array(config.utf8), to: root + "/nginx.conf")
            let server = Process()
            server.executableURL = URL(fileURLWithPath: "/usr/sbin/nginx")
            server.arguments = ["-p", root, "-c", root + "/nginx.conf", "-e", root + "/nginx.log"]
            server.standardOutput = FileHandle.nullDevice
            server.standardError = FileHandle.nullDevice
            try server.run()
            defer {
                server.terminate()
                server.waitUntilExit()
            }
            let serving = try await Processes.waitForPort(port, seconds: 120, while: { server.isRunning })
            let log = (try? String(contentsOfFile: root + "/nginx.log", encoding: .utf8)) ?? ""
            try #require(serving, "nginx did not serve: \(log.suffix(600))")
            let published = ["manifest.json", "index.html", page]
            let hidden = dotFiles + dotFiles.map { "pages/../" + $0 }
            let answers = try await Self.ask("http://127.0.0.1:\(port)/", published + hidden)
            for path in published { #expect(answers[path] == "200 gzip", "\(path): \(answers[path] ?? "no answer")") }
            for path in hidden { #expect(answers[path]?.hasPrefix("404") == true, "\(path): \(answers[path] ?? "no answer")") }
        }
    }
}
