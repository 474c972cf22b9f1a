// AsciiDriver: the classic text protocol behind the Client API.
#pragma once

#include "folsom/protocol/ascii_decoder.hpp"

#include "wire/protocol_driver.hpp"

namespace folsom::detail {

class AsciiDriver final : public ProtocolDriver {
  public:
    explicit AsciiDriver(const Options& options);

    std::error_code encode(const Request& r, protocol::OutputBuffer& out,
                           net::Command& cmd) override;
    bool join(const Request& r, protocol::OutputBuffer& out, const net::Command& last,
              net::Command& cmd) override;
    DecodeStep decode(std::string_view input, net::CommandQueue& inflight) override;
    void reset() noexcept override {
        decoder_.reset();
        group_open_ = false;
        group_left_ = 0;
    }

  private:
    static constexpr bool joinable(OpCode c) noexcept {
        return c == OpCode::get || c == OpCode::gets;
    }
    /// A VALUE, END or refusal for the kept-key commands at the front; false: out of step.
    bool decode_keyed(const protocol::ascii::Reply& reply, net::CommandQueue& inflight);

    protocol::Limits limits_;
    std::size_t scatter_threshold_;
    protocol::ascii::Decoder decoder_;
    /// Decoding a wire command whose END is still due: its first group_left_ commands are at
    /// the front of the queue, those answered out of order among them not yet completed
    /// (decoder side: strand only).
    bool group_open_ = false;
    std::size_t group_left_ = 0;
};

}  // namespace folsom::detail
