// AsciiDriver: the classic text protocol behind the Client API.
#pragma once

#include "folsom/protocol/ascii_decoder.hpp"

#include "client/protocol_driver.hpp"

namespace folsom::detail {

class AsciiDriver final : public ProtocolDriver {
  public:
    explicit AsciiDriver(const Options& options);

    std::error_code encode(const Request& r, protocol::OutputBuffer& out,
                           net::Command& cmd) override;
    DecodeStep decode(std::string_view input, net::CommandQueue& inflight) override;
    void reset() noexcept override { decoder_.reset(); }

  private:
    protocol::Limits limits_;
    std::size_t scatter_threshold_;
    protocol::ascii::Decoder decoder_;
};

}  // namespace folsom::detail
