// A checkpoint as fq quantize-weights reads and writes it: one .safetensors file, or a directory of shards
// (Hugging Face's layout: model-00001-of-0000N.safetensors ... with model.safetensors.index.json mapping each
// tensor to its shard, beside config.json, tokenizer files and the rest).
#pragma once

#include <string>
#include <vector>

#include "json.h"

namespace fqtool {

struct Checkpoint {
    bool directory = false;          // false: one file, `shards` holds its path
    std::string dir;                 // the directory (directory form)
    std::vector<std::string> shards; // shard file names in `dir` (directory form), sorted
    JsonMap index;                   // model.safetensors.index.json, or null when the directory has none
    std::vector<std::string> others; // the directory's other regular files (copied unchanged, or rewritten)
    std::vector<std::string> subdirectories;  // not copied (a repository's "original/" weights, ...)
};

constexpr const char* kIndexName = "model.safetensors.index.json";

// IN as the user names it: a .safetensors file, a directory, or a model.safetensors.index.json (its
// directory). Throws ToolError naming what is missing or malformed.
Checkpoint open_checkpoint(const std::string& in);

// Throws ToolError when writing `out` could overwrite `in`: the same path, or the same file or directory by
// device and inode (a link, "dir/../dir"). `out` need not exist.
void refuse_same_file(const std::string& in, const std::string& out);

// Writes `text` to `path` through a temporary file in the same directory and a rename.
void write_file_atomically(const std::string& path, const std::string& text);
// Copies `from` to `to` the same way.
void copy_file_atomically(const std::string& from, const std::string& to);
// The JSON of a file (Json keeps its key order, JsonMap sorts them); throws ToolError naming the file.
template <class J>
J read_json_file(const std::string& path);

}  // namespace fqtool
