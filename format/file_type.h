// A model file's type as llama.cpp names it ("Q4_K - Medium", "all F32"):
// general.file_type holds llama.cpp's enum llama_ftype, the recipe the file
// was quantized with. It is not the type of any one tensor (a Q4_K_M file
// mixes q4_K, q6_K and f32 tensors), so it cannot be read off the tensors.
#pragma once
#include <cstdint>
#include <string>

namespace edgellm::gguf {

class File;

// llama.cpp's name for an enum llama_ftype value: "all F32", "F16", "Q4_0",
// "Q4_K - Medium", "IQ4_NL - 4.5 bpw", ...; "unknown, may not work" for a
// value it does not define (llama.cpp says the same).
const char* file_type_name(uint32_t ftype);

struct FileType {
  uint32_t ftype = 0;    // enum llama_ftype
  bool guessed = false;  // no general.file_type: from the most common tensor type
};

// general.file_type when present (and an integer), else guessed from the
// type most tensors have, as llama.cpp's loader does.
FileType file_type_of(const File& f);

// file_type_name() of file_type_of(), with llama.cpp's "(guessed) " prefix
// when guessed: "Q4_K - Medium", "(guessed) all F32".
std::string file_type_label(const File& f);

}  // namespace edgellm::gguf
