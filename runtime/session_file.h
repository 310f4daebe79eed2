// Session files: a sequence's token history and KV cache on disk, so a later
// run (or the same one after memory pressure) continues without prefilling
// the shared prefix again.
//
// Layout, little-endian:
//   "EDGESESS"  magic (8 bytes)
//   u32 version (1), u32 header_bytes
//   header: model identity (file size, tensor bytes, a hash of the GGUF
//           header and of 16 sampled 4 KiB blocks of tensor data),
//           hyper-parameters (n_layer, n_embd, n_head, n_head_kv, head_dim,
//           head_dim_v, n_vocab, rope base bits), KV types and row bytes,
//           n_tokens
//   payload: i32 token ids [n_tokens]; per layer, K rows [n_tokens], then
//            per layer V rows [n_tokens]
//   u64 checksum over everything before it
// Written through DurableFile (temp file, fsync, rename, fsync of the
// directory): a crash leaves the old file or the new one, never a mix. On
// load every field is checked before a byte of the cache is touched: a
// truncated, corrupt or foreign file is refused with a message.
#pragma once
#include <cstdint>
#include <cstdio>
#include <string>

#include "runtime/session.h"

namespace edgellm {

// Writes s's cached tokens and rows to path.
void save_session(Session& s, const std::string& path);

// Replaces s's cache with the file's (its n_ctx must hold them). Throws
// edgellm::Error, leaving s empty, when the file cannot be used.
void load_session(Session& s, const std::string& path);

// The same through an open stream (e.g. an unlinked temporary file from
// std::tmpfile() for --session-private spills); the stream is rewound first.
void save_session(Session& s, std::FILE* f);
void load_session(Session& s, std::FILE* f);

// The model identity written into session files (cheap: header + samples).
uint64_t model_identity(const Model& m);

}  // namespace edgellm
