#include "safetensors.h"

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace fqtool {

size_t dtype_size(const std::string& d) {
    if (d == "F64" || d == "I64" || d == "U64") return 8;
    if (d == "F32" || d == "I32" || d == "U32") return 4;
    if (d == "F16" || d == "BF16" || d == "I16" || d == "U16") return 2;
    if (d == "I8" || d == "U8" || d == "BOOL" || d == "F8_E4M3" || d == "F8_E5M2" || d == "F8_E8M0") return 1;
    return 0;
}

int64_t TensorInfo::elements() const {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return n;
}

SafetensorsReader::SafetensorsReader(const std::string& path) : path_(path) {
    f_ = std::fopen(path.c_str(), "rb");
    if (!f_) throw std::runtime_error(path + ": cannot open: " + std::strerror(errno));
    uint8_t len_bytes[8];
    if (std::fread(len_bytes, 1, 8, f_) != 8) throw std::runtime_error(path + ": shorter than the 8-byte header length");
    uint64_t n = 0;
    for (int i = 7; i >= 0; --i) n = (n << 8) | len_bytes[i];  // little-endian, whatever the host's order
    std::fseek(f_, 0, SEEK_END);
    const uint64_t file_size = uint64_t(std::ftell(f_));
    if (n > file_size - 8 || n > (uint64_t(1) << 30))
        throw std::runtime_error(path + ": header length " + std::to_string(n) + " exceeds the file");
    std::string header(size_t(n), '\0');
    std::fseek(f_, 8, SEEK_SET);
    if (std::fread(header.data(), 1, n, f_) != n) throw std::runtime_error(path + ": truncated header");
    data_start_ = 8 + n;
    Json h;
    try {
        h = parse_json(header);
    } catch (const std::exception& e) {
        throw std::runtime_error(path + ": header: " + e.what());
    }
    if (h.kind != Json::Kind::Object) throw std::runtime_error(path + ": header is not a JSON object");
    for (const auto& kv : h.object) {
        if (kv.first == "__metadata__") {
            metadata_ = kv.second;
            continue;
        }
        try {
            TensorInfo t;
            t.name = kv.first;
            t.dtype = kv.second.at("dtype").as_string();
            for (const Json& d : kv.second.at("shape").array) t.shape.push_back(d.as_int());
            const Json& off = kv.second.at("data_offsets");
            if (off.array.size() != 2) throw std::runtime_error("data_offsets is not [begin, end]");
            t.begin = uint64_t(off.array[0].as_int());
            t.end = uint64_t(off.array[1].as_int());
            if (t.end < t.begin || t.end > file_size - data_start_)
                throw std::runtime_error("data_offsets outside the file");
            const size_t es = dtype_size(t.dtype);
            if (es && uint64_t(t.elements()) * es != t.bytes())
                throw std::runtime_error("shape and dtype need " + std::to_string(uint64_t(t.elements()) * es) +
                                         " bytes, data_offsets give " + std::to_string(t.bytes()));
            tensors_.push_back(std::move(t));
        } catch (const std::exception& e) {
            throw std::runtime_error(path + ": tensor \"" + kv.first + "\": " + e.what());
        }
    }
}

SafetensorsReader::~SafetensorsReader() {
    if (f_) std::fclose(f_);
}

const TensorInfo* SafetensorsReader::find(const std::string& name) const {
    for (const TensorInfo& t : tensors_)
        if (t.name == name) return &t;
    return nullptr;
}

std::vector<uint8_t> SafetensorsReader::read(const TensorInfo& t) const {
    std::vector<uint8_t> v(size_t(t.bytes()));
    std::fseek(f_, long(data_start_ + t.begin), SEEK_SET);
    if (std::fread(v.data(), 1, v.size(), f_) != v.size())
        throw std::runtime_error(path_ + ": tensor \"" + t.name + "\": short read");
    return v;
}

void SafetensorsWriter::declare(const std::string& name, const std::string& dtype, std::vector<int64_t> shape,
                                uint64_t bytes) {
    if (f_) throw std::runtime_error("safetensors: declare after begin");
    TensorInfo t{name, dtype, std::move(shape), next_offset_, next_offset_ + bytes};
    next_offset_ = t.end;
    tensors_.push_back(std::move(t));
}

void SafetensorsWriter::begin(const std::string& path, const Json& metadata) {
    Json h = Json::make_object();
    if (metadata.kind == Json::Kind::Object && !metadata.object.empty()) h.set("__metadata__", metadata);
    for (const TensorInfo& t : tensors_) {
        Json e = Json::make_object(), shape = Json::make_array(), off = Json::make_array();
        e.set("dtype", Json::of(t.dtype));
        for (int64_t d : t.shape) shape.array.push_back(Json::of(d));
        e.set("shape", shape);
        off.array.push_back(Json::of(int64_t(t.begin)));
        off.array.push_back(Json::of(int64_t(t.end)));
        e.set("data_offsets", off);
        h.set(t.name, e);
    }
    std::string header = to_json(h);
    header.append((8 - header.size() % 8) % 8, ' ');
    path_ = path;
    f_ = std::fopen(path.c_str(), "wb");
    if (!f_) throw std::runtime_error(path + ": cannot create: " + std::strerror(errno));
    uint8_t len[8];
    for (int i = 0; i < 8; ++i) len[i] = uint8_t(uint64_t(header.size()) >> (8 * i));
    if (std::fwrite(len, 1, 8, f_) != 8 || std::fwrite(header.data(), 1, header.size(), f_) != header.size())
        throw std::runtime_error(path + ": write failed");
}

void SafetensorsWriter::write_next(const std::string& name, const void* data, size_t bytes) {
    if (!f_ || written_ >= tensors_.size() || tensors_[written_].name != name || tensors_[written_].bytes() != bytes)
        throw std::runtime_error("safetensors: \"" + name + "\" written out of its declared order or size");
    if (bytes && std::fwrite(data, 1, bytes, f_) != bytes) throw std::runtime_error(path_ + ": write failed");
    ++written_;
}

void SafetensorsWriter::finish() {
    if (written_ != tensors_.size())
        throw std::runtime_error("safetensors: " + std::to_string(tensors_.size() - written_) + " declared tensors not written");
    if (f_ && std::fclose(f_) != 0) throw std::runtime_error(path_ + ": close failed");
    f_ = nullptr;
}

SafetensorsWriter::~SafetensorsWriter() {
    if (f_) std::fclose(f_);
}

}  // namespace fqtool
