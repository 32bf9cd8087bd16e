#include "checkpoint.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>

#include "cli.h"

namespace fqtool {

namespace fs = std::filesystem;

namespace {

bool ends_with(const std::string& s, const std::string& tail) {
    return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

std::string temp_beside(const std::string& path) {
    return path + ".fq-tmp-" + std::to_string(::getpid());
}

}  // namespace

template <class J>
J read_json_file(const std::string& path) {
    std::ifstream f(path);
    if (!f) throw ToolError(path + ": cannot open");
    try {
        return J::parse(f);
    } catch (const nlohmann::json::exception& e) {
        throw ToolError(path + ": not JSON: " + e.what());
    }
}
template Json read_json_file<Json>(const std::string&);
template JsonMap read_json_file<JsonMap>(const std::string&);

Checkpoint open_checkpoint(const std::string& in) {
    Checkpoint c;
    std::error_code ec;
    const fs::file_status st = fs::status(in, ec);
    if (!fs::exists(st)) throw ToolError(in + ": no such file or directory");
    const bool index_file = fs::is_regular_file(st) && ends_with(in, ".json");
    if (fs::is_regular_file(st) && !index_file) {
        c.shards = {in};
        return c;
    }
    c.directory = true;
    c.dir = index_file ? fs::path(in).parent_path().string() : in;
    if (c.dir.empty()) c.dir = ".";
    const std::string index_path = index_file ? in : (fs::path(c.dir) / kIndexName).string();
    std::set<std::string> shard_set;
    if (fs::exists(index_path)) {
        c.index = read_json_file<JsonMap>(index_path);
        const JsonMap* map = c.index.contains("weight_map") ? &c.index["weight_map"] : nullptr;
        if (!map || !map->is_object()) throw ToolError(index_path + ": no \"weight_map\" object");
        for (const auto& kv : map->items()) {
            if (!kv.value().is_string()) throw ToolError(index_path + ": weight_map \"" + kv.key() + "\" is not a file name");
            const std::string shard = kv.value().get<std::string>();
            if (shard.find('/') != std::string::npos || shard == ".." || shard.empty())
                throw ToolError(index_path + ": weight_map names \"" + shard + "\", not a file of the checkpoint's directory");
            if (shard_set.insert(shard).second) c.shards.push_back(shard);
        }
        std::sort(c.shards.begin(), c.shards.end());
    } else {
        for (const fs::directory_entry& e : fs::directory_iterator(c.dir))
            if (e.is_regular_file() && ends_with(e.path().filename().string(), ".safetensors"))
                c.shards.push_back(e.path().filename().string());
        std::sort(c.shards.begin(), c.shards.end());
        shard_set.insert(c.shards.begin(), c.shards.end());
    }
    if (c.shards.empty()) throw ToolError(in + ": no .safetensors file (and no " + kIndexName + ")");
    for (const fs::directory_entry& e : fs::directory_iterator(c.dir)) {
        const std::string name = e.path().filename().string();
        if (e.is_directory()) c.subdirectories.push_back(name);
        if (!e.is_regular_file() || shard_set.count(name) || name == fs::path(index_path).filename().string()) continue;
        c.others.push_back(name);
    }
    std::sort(c.others.begin(), c.others.end());
    return c;
}

void refuse_same_file(const std::string& in, const std::string& out) {
    std::error_code ec;
    const bool same = fs::path(in).lexically_normal() == fs::path(out).lexically_normal() || fs::equivalent(in, out, ec);
    if (same) throw ToolError("the output " + out + " is the input " + in + ": quantize-weights never overwrites its input");
}

void write_file_atomically(const std::string& path, const std::string& text) {
    const std::string temp = temp_beside(path);
    {
        std::ofstream f(temp, std::ios::binary);
        f << text;
        if (!f.flush()) throw ToolError(temp + ": write failed");
    }
    fs::rename(temp, path);
}

void copy_file_atomically(const std::string& from, const std::string& to) {
    const std::string temp = temp_beside(to);
    fs::copy_file(from, temp, fs::copy_options::overwrite_existing);
    fs::rename(temp, to);
}

}  // namespace fqtool
