import PartitionOperations
import Testing
import ZeroMQ

/// The leader key's value (`NODE ENDPOINT [KEY]`) and what a follower makes of it.
@Suite struct LeaderAddressTests {
    @Test func valuesRoundTripWithAndWithoutAKey() throws {
        let key = try Z85.encode(try CurveKeyPair.generate().publicKey)
        for address in [
            LeaderAddress(node: "w1", endpoint: "tcp://10.0.0.11:5570", publicKey: nil),
            LeaderAddress(node: "w1", endpoint: "tcp://10.0.0.11:5570", publicKey: key),
        ] {
            #expect(try LeaderAddress(parsing: address.description) == address)
        }
        #expect(LeaderAddress(node: "w1", endpoint: "tcp://10.0.0.11:5570", publicKey: nil).description == "w1 tcp://10.0.0.11:5570")
    }

    @Test(arguments: ["", "w1", "w1 10.0.0.11:5570", "w 1 tcp://10.0.0.11:5570", "w1 tcp://a:1 short", "w1 tcp://a:1 \(String(repeating: "~", count: 40))",
                      "w1 tcp://a:1 KEY extra", "w1  tcp://a:1"])
    func malformedValuesAreRefused(_ value: String) {
        #expect(throws: UntrustedLeader.self) { try LeaderAddress(parsing: value) }
    }
}
