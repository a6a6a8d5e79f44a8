import LyceumSupport
import LoadTest
import Testing

@Suite struct ScenarioMixTests {
    @Test func parsesNamesWeightsAndTheRealisticMix() throws {
        #expect(try ScenarioMix(parsing: "mix") == .realistic)
        let mix = try ScenarioMix(parsing: "book-read=3,catalog-read")
        #expect(mix.entries.map(\.scenario) == [.bookRead, .catalogRead])
        #expect(mix.entries.map(\.weight) == [3, 1])
        #expect(try ScenarioMix(parsing: mix.description) == mix)
    }

    @Test(arguments: ["", "book-reads", "book-read=0", "book-read=x", "book-read,book-read", "book-read=3,"])
    func refusesWhatIsNotAMix(_ text: String) {
        #expect(throws: LoadTestError.self) { try ScenarioMix(parsing: text) }
    }

    @Test func theSameSeedPicksTheSameSequenceInProportion() throws {
        let mix = try ScenarioMix(parsing: "book-read=3,book-create=1")
        var first = SeededGenerator(seed: 9), second = SeededGenerator(seed: 9)
        let picks = (0..<4000).map { _ in mix.pick(using: &first) }
        #expect(picks == (0..<4000).map { _ in mix.pick(using: &second) })
        let reads = picks.filter { $0 == .bookRead }.count
        #expect((2800...3200).contains(reads))
    }

    @Test func configurationRefusesMeaninglessRuns() {
        var configuration = LoadTestConfiguration(connections: 8, load: .closed(inFlight: 4))
        #expect(throws: LoadTestError.self) { try configuration.validate() }
        configuration.load = .open(rate: 0, maxInFlight: 100)
        #expect(throws: LoadTestError.self) { try configuration.validate() }
        configuration.load = .open(rate: 1000, maxInFlight: 100)
        #expect(throws: Never.self) { try configuration.validate() }
    }
}
