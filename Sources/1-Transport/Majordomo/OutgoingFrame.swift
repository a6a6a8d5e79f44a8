import ZeroMQ

/// A frame a broker or worker sends as a body frame: bytes, copied by libzmq, or a received
/// `Message`, handed to libzmq without a copy (and emptied by it).
protocol OutgoingFrame {
    /// Sends the frame; `false` when the socket would block.
    func send(on socket: Socket, options: SendOptions) throws(ZMQError) -> Bool
}

extension [UInt8]: OutgoingFrame {
    func send(on socket: Socket, options: SendOptions) throws(ZMQError) -> Bool {
        try socket.send(self, options: options)
    }
}

extension Message: OutgoingFrame {
    func send(on socket: Socket, options: SendOptions) throws(ZMQError) -> Bool {
        try socket.send(self, options: options)
    }
}

extension Socket {
    /// Sends an empty frame, MDP's delimiter; `false` when the socket would block.
    @discardableResult
    func sendEmptyFrame(options: SendOptions) throws(ZMQError) -> Bool {
        try send(UnsafeRawBufferPointer(start: nil, count: 0), options: options)
    }

    /// Sends `body` as the last frames of a message, without waiting: after the first frame of a
    /// message is queued the rest are too. A body without frames is sent as one empty frame,
    /// since MDP requires at least one.
    func sendBody(_ body: some Collection<some OutgoingFrame>) throws(ZMQError) {
        guard !body.isEmpty else {
            try sendEmptyFrame(options: .dontWait)
            return
        }
        var remaining = body.count
        for frame in body {
            remaining -= 1
            _ = try frame.send(on: self, options: remaining > 0 ? [.dontWait, .more] : .dontWait)
        }
    }
}
