// hooks/imports: which loaded objects refer to a symbol they do not define.
#pragma once

#include <cstddef>

namespace pw::hooks {

// True if an object loaded now (the program or a library, parwidth itself
// excepted) has an undefined dynamic symbol named one of names[0..n): it
// calls that function. Reads the objects' dynamic symbol tables in memory;
// no loader calls beyond dl_iterate_phdr, no allocation. `who` receives the
// first such name found (or nullptr).
bool any_object_imports(const char* const* names, size_t n, const char** who);

}  // namespace pw::hooks
