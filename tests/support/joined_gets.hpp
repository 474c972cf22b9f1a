// A load that makes the text protocol join gets into full lines, checked answer by answer:
// used against memcached itself and through twemproxy, which splits such lines over its
// servers and merges their answers.
#pragma once

#include "folsom/options.hpp"

namespace folsom::test {

/// Sets the even-numbered of `n` keys of 250 bytes and of `n` short keys, then makes a get of
/// every one of the 2n keys before the client has connected, so that they go out together:
/// over the text protocol as "get k1 k2 ..." lines of up to 16 KiB of keys (65 long keys, or
/// a thousand and more short ones, to a line). Returns how many gets got their own answer: a
/// hit with the value set for its key, or a miss for an odd key. 2n when all did.
int joined_gets_answered(Options options, int n);

}  // namespace folsom::test
