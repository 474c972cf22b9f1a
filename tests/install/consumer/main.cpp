// A program outside the folsom tree, built against the installed package.
#include <folsom/error.hpp>
#include <folsom/protocol/ascii_encoder.hpp>
#include <iostream>

int main() {
    folsom::protocol::OutputBuffer out;
    std::string_view keys[] = {"hello"};
    if (folsom::protocol::ascii::encode_retrieve(out, folsom::protocol::ascii::RetrieveCommand::get,
                                                 keys))
        return 1;
    if (out.contiguous() != "get hello\r\n") return 1;
    std::error_code ec = folsom::errc::invalid_key;
    std::cout << ec.category().name() << ": " << ec.message() << "\n";
    return 0;
}
