// Counts read from the environment (RG_THREADS, RG_BEAM, RG_RING): one parser, one error, for every layer.
#pragma once

namespace rg {

// `text` as a count from lo to hi; anything else is an rg::Error naming `var`:
// "RG_THREADS: expected a count from 1 to 1024, got 'abc'".
int parse_count(const char* var, const char* text, int lo, int hi);
// The environment variable's count, or `unset` when it is not set or empty.
int env_count(const char* var, int lo, int hi, int unset);

}  // namespace rg
