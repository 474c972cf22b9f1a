// `folsom bench`: the load generator's command line, and the run from server to summary.
#pragma once

#include "bench/workload.hpp"
#include "global_options.hpp"

#include <CLI/App.hpp>

#include <functional>
#include <string>

namespace folsom::bench {

class BenchCommand {
  public:
    explicit BenchCommand(const cli::GlobalOptions& g) : g_(g) {}

    void add_to(CLI::App& app, std::function<int()>& action);

  private:
    int run();

    const cli::GlobalOptions& g_;
    Workload w_;
    std::string op_name_ = "get";
    std::string key_order_ = "random";
    bool preload_ = true;
    bool preload_given_ = false;
    bool duration_given_ = false;
    std::string json_path_;
    std::string html_path_;
    int cpu_ = -1;
    bool metrics_ = false;
    bool floor_ = false;
};

}  // namespace folsom::bench
