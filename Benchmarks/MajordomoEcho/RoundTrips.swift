import Majordomo
import ZeroMQ

/// A request in flight: when it left, and the body its reply must echo.
struct SentRequest {
    var at: ContinuousClock.Instant
    var body: [[UInt8]]
}

/// Keeps `client` full with requests and records each one's round trip.
func pipelined(_ client: AsyncClient, into measurement: inout Measurement, recording: Bool,
               bodies: inout EchoBodies, sent: inout [AsyncClient.RequestID: SentRequest]) throws {
    while client.inFlight < client.capacity {
        let body = bodies.next()
        sent[try client.send("echo", body: body)] = SentRequest(at: clock.now, body: body)
    }
    guard let completion = try client.receive(timeout: .seconds(5)) else { fail("\(measurement.name): no reply within 5 s") }
    let reply = try completion.result.get()
    let request = sent.removeValue(forKey: completion.id)!
    checkEcho(reply, of: request.body, in: measurement.name)
    if recording { measurement.latencies.append(clock.now - request.at) }
}

/// Measures `settings.inFlight` requests kept in flight against `endpoint`.
func measureInFlight(_ name: String, endpoint: String, context: Context) throws -> Measurement {
    let client = AsyncClient(endpoint: endpoint, capacity: settings.inFlight, context: context)
    defer { client.close() }
    var bodies = EchoBodies(bytes: settings.bodyBytes)
    var sent: [AsyncClient.RequestID: SentRequest] = [:]
    let measurement = try measure(name) { measurement, recording in
        try pipelined(client, into: &measurement, recording: recording, bodies: &bodies, sent: &sent)
    }
    while try client.receive(timeout: .seconds(1)) != nil {}
    return measurement
}

/// Measures one synchronous client, one request at a time, against `endpoint`.
func measureSynchronous(_ name: String, endpoint: String, context: Context) throws -> Measurement {
    let client = Client(endpoint: endpoint, context: context)
    defer { client.close() }
    var bodies = EchoBodies(bytes: settings.bodyBytes)
    return try measure(name) { measurement, recording in
        let body = bodies.next()
        let start = clock.now
        let reply = try client.call("echo", body: body)
        if recording { measurement.latencies.append(clock.now - start) }
        checkEcho(reply, of: body, in: name)
    }
}
