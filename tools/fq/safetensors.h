// .safetensors files: an 8-byte little-endian header length N, N bytes of JSON ({"name": {"dtype", "shape",
// "data_offsets": [begin, end]}, ..., "__metadata__": {string: string}}), then the raw tensor bytes
// (offsets relative to the end of the header). Reading loads the header and one tensor at a time; writing
// declares every tensor first, writes the header, then streams the data in the declared order, so neither
// holds a whole checkpoint in memory.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <unordered_set>
#include <vector>

#include "json.h"

namespace fqtool {

struct TensorInfo {
    std::string name, dtype;  // dtype as safetensors spells it: BF16, F16, F32, F8_E4M3, F8_E8M0, U8, ...
    std::vector<int64_t> shape;
    uint64_t begin = 0, end = 0;  // byte offsets in the data section
    uint64_t bytes() const { return end - begin; }
    int64_t elements() const;
};

// Bits of one element of a safetensors dtype (F4 is 4, F6_* 6), or 0 when the reference does not know it.
size_t dtype_bits(const std::string& dtype);

// Reads a file only once it has passed the reference implementation's checks (safetensors' Metadata::validate):
// a JSON object header of at most 100 MB, no tensor name twice, a known dtype and a non-negative shape per
// tensor, its byte count equal to the shape's elements times the dtype's size, and offsets that, sorted, tile
// the data section from 0 to its end with no gap or overlap. A file that fails one is refused with
// std::runtime_error naming the file, the tensor and the check.
class SafetensorsReader {
public:
    explicit SafetensorsReader(const std::string& path);
    ~SafetensorsReader();
    SafetensorsReader(const SafetensorsReader&) = delete;
    SafetensorsReader& operator=(const SafetensorsReader&) = delete;

    const std::string& path() const { return path_; }
    const std::vector<TensorInfo>& tensors() const { return tensors_; }  // in the order of their data
    const JsonMap& metadata() const { return metadata_; }                  // an object (empty when the file has none)
    const TensorInfo* find(const std::string& name) const;
    std::vector<uint8_t> read(const TensorInfo& t) const;
    uint64_t file_bytes() const { return file_bytes_; }

private:
    std::string path_;
    FILE* f_ = nullptr;
    uint64_t data_start_ = 0, file_bytes_ = 0;
    std::vector<TensorInfo> tensors_;
    JsonMap metadata_ = JsonMap::object();
};

// Writes a new file without ever leaving a partial one at `path`: the bytes go to a temporary file in the same
// directory, renamed to `path` by finish() (an atomic replace on POSIX) and removed when the writer is destroyed
// before that.
class SafetensorsWriter {
public:
    // Throws when `name` was declared before (a file the reference reader would refuse).
    void declare(const std::string& name, const std::string& dtype, std::vector<int64_t> shape, uint64_t bytes);
    // Writes the header (padded with spaces to a multiple of 8 bytes, as the reference implementation does).
    void begin(const std::string& path, const JsonMap& metadata);
    // The data of the next declared tensor; its size must be the declared one.
    void write_next(const std::string& name, const void* data, size_t bytes);
    void finish();  // checks every declared tensor was written, closes and renames the file
    const std::vector<TensorInfo>& tensors() const { return tensors_; }
    uint64_t file_bytes() const { return header_bytes_ + next_offset_; }
    ~SafetensorsWriter();

private:
    std::vector<TensorInfo> tensors_;
    std::unordered_set<std::string> names_;
    uint64_t next_offset_ = 0, header_bytes_ = 0;
    size_t written_ = 0;
    FILE* f_ = nullptr;
    std::string path_, temp_path_;
};

}  // namespace fqtool
