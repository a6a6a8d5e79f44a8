import Foundation
import HTTPServer

/// The dashboard's HTTP surface: `GET /` (the page), `GET /dashboard.js`, `GET /dashboard.css`
/// (files of this module's resource bundle, read once at start) and `GET /events`, the
/// Server-Sent Events stream of the ``DashboardFeed``. With a token, the page and the stream
/// require it (`Authorization: Bearer <token>` or `?token=<token>`): they show learner ids.
struct DashboardResponder: HTTPResponder, Sendable {
    /// A file of the page: its bytes and content type.
    struct File: Sendable {
        let bytes: [UInt8]
        let type: String
    }

    /// The page's files by request path.
    let files: [String: File]
    let feed: DashboardFeed
    /// The bearer token the page and the stream require; `nil` requires none (loopback).
    let token: String?

    /// 2,048 connections (the page's three files, and one stream per open page), 5 seconds for a
    /// request, 128 KiB unsent per stream beside a 64 KiB kernel send buffer (Linux doubles it),
    /// a keep-alive comment every 15 seconds: about 512 MiB at most however many peers stop reading.
    static let limits = HTTPLoop.Limits(maxConnections: 2_048, requestTimeout: .seconds(5), sendBufferBytes: 65_536)

    /// The responder for `feed`, with the page's files read from the `DashboardPage` folder of
    /// this module's resource bundle.
    /// - Throws: ``DashboardError`` when a file is missing from the bundle.
    init(feed: DashboardFeed, token: String?) throws(DashboardError) {
        var files: [String: File] = [:]
        for (path, name, type) in [
            ("/", "index.html", "text/html; charset=utf-8"), ("/dashboard.js", "dashboard.js", "text/javascript; charset=utf-8"),
            ("/dashboard.css", "dashboard.css", "text/css; charset=utf-8"),
        ] {
            guard let url = Bundle.module.url(forResource: name, withExtension: nil, subdirectory: "DashboardPage"),
                  let data = FileManager.default.contents(atPath: url.path)
            else { throw DashboardError("the dashboard's \(name) is missing from \(Bundle.module.bundlePath)/DashboardPage") }
            files[path] = File(bytes: Array(data), type: type)
        }
        self.files = files
        self.feed = feed
        self.token = token
    }

    func response(to request: HTTPRequest) -> HTTPResponse {
        guard request.isWellFormed else { return Self.text("400 Bad Request", "malformed request line\n") }
        guard request.method == "GET" else { return Self.text("405 Method Not Allowed", "only GET\n", [("Allow", "GET")]) }
        let isStatic = request.path == "/dashboard.js" || request.path == "/dashboard.css"
        guard isStatic || isAuthorized(request) else {
            return Self.text("401 Unauthorized", "this dashboard needs its token: Authorization: Bearer <token>, or ?token=<token>\n",
                             [("WWW-Authenticate", "Bearer")])
        }
        if request.path == "/events" {
            let opened = feed.open(lastEventID: request.headers["last-event-id"], limit: Self.limits.maxStreamBytes)
            let head = HTTPResponse.head(status: "200 OK", type: "text/event-stream; charset=utf-8", headers: [
                ("Cache-Control", "no-store"), ("X-Content-Type-Options", "nosniff"),
            ])
            // The retry line tells the browser how soon to reconnect after the stream ends.
            return .stream(head: Array(head.utf8) + Array("retry: 1000\n\n".utf8) + opened.bytes, position: opened.position)
        }
        guard let file = files[request.path] else { return Self.text("404 Not Found", "not found\n") }
        return .complete(status: "200 OK", type: file.type, body: file.bytes, headers: [
            ("Cache-Control", "no-store"), ("X-Content-Type-Options", "nosniff"),
            ("Content-Security-Policy", "default-src 'self'; frame-ancestors 'none'"),
        ])
    }

    var streamWakeDescriptor: Int32? { feed.wakeup.fileDescriptor }
    func takeStreamChunks() -> [(position: UInt64, bytes: [UInt8])] { feed.takeChunks() }
    /// An SSE comment: ignored by the browser, and it keeps the connection known to be alive.
    var keepAlive: [UInt8] { Array(": keep-alive\n\n".utf8) }

    /// Whether the request carries the token (in its header, or else its query), when one is required.
    private func isAuthorized(_ request: HTTPRequest) -> Bool {
        guard let token else { return true }
        return BearerToken(token).matches(BearerToken.presented(in: request) ?? request.query["token"])
    }

    private static func text(_ status: String, _ body: String, _ headers: [(String, String)] = []) -> HTTPResponse {
        .complete(status: status, type: "text/plain; charset=utf-8", body: Array(body.utf8), headers: headers)
    }
}

/// The dashboard cannot start.
public struct DashboardError: Error, Sendable, CustomStringConvertible {
    /// What is wrong.
    public let description: String

    init(_ description: String) { self.description = description }
}
