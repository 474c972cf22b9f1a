// The connection's FIFO of commands, and the copies of keys it keeps for drivers that match
// replies by key.
#include "wire/command_queue.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <deque>
#include <string>

namespace {

using folsom::net::Command;
using folsom::net::CommandQueue;

Command keyed(std::uint32_t part) {
    Command c;
    c.part = part;
    c.keep_key = true;
    return c;
}

std::string key_for(std::uint32_t i) {
    return "key:" + std::to_string(i) + std::string(i % 200, 'x');
}

TEST(CommandQueue, KeepsKeysInOrderAcrossGrowthTrimmingAndSplicing) {
    // A model FIFO beside the queue: pending commands are spliced into the in-flight queue in
    // batches and popped one by one, long enough for the ring to grow and the key arena to be
    // trimmed many times.
    CommandQueue pending, inflight;
    std::deque<std::uint32_t> model;
    std::uint32_t next = 0;
    for (int round = 0; round < 300; ++round) {
        const int pushes = 1 + (round * 7) % 90;
        for (int i = 0; i < pushes; ++i, ++next) {
            Command c = next % 5 == 0 ? Command{} : keyed(next);  // some keep no key
            c.part = next;
            pending.push_back(c, key_for(next));
            model.push_back(next);
        }
        EXPECT_EQ(pending.key(pending.back()).empty(), (next - 1) % 5 == 0);
        inflight.splice_back(pending);
        ASSERT_TRUE(pending.empty());
        const int pops = (round * 13) % 100;
        for (int i = 0; i < pops && !inflight.empty(); ++i) {
            ASSERT_EQ(inflight.size(), model.size());
            if (inflight.size() > 1) {
                ASSERT_EQ(inflight.at(1).part, model[1]);
            }
            const Command& f = inflight.front();
            ASSERT_EQ(f.part, model.front());
            if (f.keep_key) {
                ASSERT_EQ(inflight.key(f), key_for(f.part));
            }
            inflight.pop_front();
            model.pop_front();
        }
    }
    while (!inflight.empty()) {
        const Command& f = inflight.front();
        ASSERT_EQ(f.part, model.front());
        if (f.keep_key) {
            ASSERT_EQ(inflight.key(f), key_for(f.part));
        }
        inflight.pop_front();
        model.pop_front();
    }
    EXPECT_TRUE(model.empty());
}

TEST(CommandQueue, SplicesAQueueThatHasWrappedAndDroppedKeys) {
    // The source queue's ring has wrapped and its key arena holds dead keys in front (it was
    // popped from): the spliced commands still find their own keys, after the target's.
    for (int target_size : {0, 3, 70}) {
        CommandQueue source, target;
        std::deque<std::uint32_t> model;
        std::uint32_t next = 0;
        for (int i = 0; i < 50; ++i, ++next)
            source.push_back(keyed(next), key_for(next));
        for (int i = 0; i < 40; ++i)
            source.pop_front();
        for (int i = 0; i < 60; ++i, ++next)  // wraps the 64-slot ring
            source.push_back(keyed(next), key_for(next));
        for (int i = 0; i < target_size; ++i)
            target.push_back(keyed(1000 + i), key_for(1000 + i));
        for (int i = 0; i < target_size; ++i)
            model.push_back(1000 + i);
        for (std::uint32_t p = 40; p < next; ++p)
            model.push_back(p);
        target.splice_back(source);
        EXPECT_TRUE(source.empty());
        ASSERT_EQ(target.size(), model.size());
        for (std::size_t i = 0; i < model.size(); ++i) {
            ASSERT_EQ(target.at(i).part, model[i]);
            ASSERT_EQ(target.key(target.at(i)), key_for(model[i])) << i;
        }
        // The emptied source is usable again.
        source.push_back(keyed(7), key_for(7));
        EXPECT_EQ(source.key(source.front()), key_for(7));
    }
}

}  // namespace
