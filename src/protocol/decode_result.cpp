#include "folsom/protocol/decode_result.hpp"

namespace folsom::protocol {

std::string DecodeError::message() const {
    std::string s = reason;
    s += " at offset ";
    s += std::to_string(offset);
    s += ": \"";
    s.append(context, context_size);
    s += '"';
    return s;
}

}  // namespace folsom::protocol
