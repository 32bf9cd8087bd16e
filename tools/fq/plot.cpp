#include "plot.h"

#include <cstdlib>

#include "cli.h"

namespace fqtool {

namespace {
std::string quoted(const std::string& s) {
    std::string out = "'";
    for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
}
}  // namespace

std::string python_with_matplotlib(const std::vector<std::string>& interpreters) {
    for (const std::string& py : interpreters)
        if (std::system((quoted(py) + " -c 'import matplotlib' >/dev/null 2>&1").c_str()) == 0) return py;
    return "";
}

void run_plot(const std::string& script, const std::string& json, const std::string& png) {
    const std::string py = python_with_matplotlib({"python3", "python"});
    if (py.empty())
        throw ToolError("--plot needs matplotlib, which neither python3 nor python on PATH has; install it with "
                        "`python3 -m pip install matplotlib` (the JSON is in " + json + ")", 1);
    const std::string cmd = quoted(py) + " " + quoted(script) + " " + quoted(json) + " " + quoted(png);
    if (std::system(cmd.c_str()) != 0) throw ToolError("--plot: `" + cmd + "` failed", 1);
}

}  // namespace fqtool
