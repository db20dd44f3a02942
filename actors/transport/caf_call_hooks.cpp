// install_in_caf_libraries: rewrites GOT entries of CAF's loaded libraries (see the header).
//
// For each loaded object whose file name is libcaf_io or libcaf_openssl, the dynamic section
// gives the symbol and string tables and the relocations the loader applied (PLT slots and
// GLOB_DAT entries, in DT_JMPREL and DT_RELA). Each relocation of a call troupe takes over has
// its slot overwritten with troupe's function. Slots on the pages of the RELRO segment, which
// the loader made read-only, are made writable for the write and read-only again.
#include "troupe/actors/transport/caf_call_hooks.hpp"

#include <elf.h>
#include <link.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

namespace troupe::caf_call_hooks {
namespace {

#if defined(__x86_64__)
constexpr uint32_t kJumpSlot = R_X86_64_JUMP_SLOT;
constexpr uint32_t kGlobDat = R_X86_64_GLOB_DAT;
#elif defined(__aarch64__)
constexpr uint32_t kJumpSlot = R_AARCH64_JUMP_SLOT;
constexpr uint32_t kGlobDat = R_AARCH64_GLOB_DAT;
#else
#error "caf_call_hooks: GOT entries are written for x86-64 and AArch64 only"
#endif

struct Replacement {
  const char* symbol;
  void* function;
};

struct Library {
  const char* name;  // a part of the file name
  std::vector<Replacement> replacements;
  bool found = false;
  std::vector<bool> replaced;
};

struct Search {
  std::vector<Library> libraries;
  Status status;
};

// The loader stores most dynamic-section addresses relocated; some loaders leave them relative.
uintptr_t absolute(const dl_phdr_info* info, ElfW(Addr) address) {
  return address < info->dlpi_addr ? info->dlpi_addr + address : address;
}

// `read_only`: the slot's page is one the loader made read-only (wholly inside RELRO).
Status write_slot(const dl_phdr_info* info, uintptr_t slot, void* function, bool read_only) {
  long page_size = sysconf(_SC_PAGESIZE);
  auto page = reinterpret_cast<void*>(slot & ~static_cast<uintptr_t>(page_size - 1));
  if (read_only && mprotect(page, page_size, PROT_READ | PROT_WRITE) != 0) {
    return errors::Internal("cannot make a GOT page of {} writable: {}", info->dlpi_name,
                            std::strerror(errno));
  }
  __atomic_store_n(reinterpret_cast<void**>(slot), function, __ATOMIC_RELEASE);
  if (read_only) mprotect(page, page_size, PROT_READ);
  return Status::OK();
}

Status patch(const dl_phdr_info* info, Library& library) {
  const ElfW(Dyn)* dynamic = nullptr;
  uintptr_t relro_begin = 0;
  uintptr_t relro_end = 0;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& header = info->dlpi_phdr[i];
    if (header.p_type == PT_DYNAMIC) {
      dynamic = reinterpret_cast<const ElfW(Dyn)*>(info->dlpi_addr + header.p_vaddr);
    } else if (header.p_type == PT_GNU_RELRO) {
      // The loader makes the whole pages of the segment read-only; a last page it only
      // partly covers stays writable (glibc rounds the end down).
      long page_size = sysconf(_SC_PAGESIZE);
      relro_begin = (info->dlpi_addr + header.p_vaddr) & ~static_cast<uintptr_t>(page_size - 1);
      relro_end = (info->dlpi_addr + header.p_vaddr + header.p_memsz) &
                  ~static_cast<uintptr_t>(page_size - 1);
    }
  }
  if (dynamic == nullptr) return errors::Internal("{} has no dynamic section", info->dlpi_name);
  uintptr_t symbols = 0, strings = 0, plt_relocations = 0, relocations = 0;
  size_t plt_size = 0, size = 0;
  for (const ElfW(Dyn)* entry = dynamic; entry->d_tag != DT_NULL; ++entry) {
    switch (entry->d_tag) {
      case DT_SYMTAB:
        symbols = absolute(info, entry->d_un.d_ptr);
        break;
      case DT_STRTAB:
        strings = absolute(info, entry->d_un.d_ptr);
        break;
      case DT_JMPREL:
        plt_relocations = absolute(info, entry->d_un.d_ptr);
        break;
      case DT_PLTRELSZ:
        plt_size = entry->d_un.d_val;
        break;
      case DT_RELA:
        relocations = absolute(info, entry->d_un.d_ptr);
        break;
      case DT_RELASZ:
        size = entry->d_un.d_val;
        break;
      default:
        break;
    }
  }
  if (symbols == 0 || strings == 0) {
    return errors::Internal("{} has no dynamic symbol table", info->dlpi_name);
  }
  for (auto [table, bytes] : {std::pair{plt_relocations, plt_size}, std::pair{relocations, size}}) {
    if (table == 0) continue;
    auto* begin = reinterpret_cast<const ElfW(Rela)*>(table);
    for (size_t i = 0; i < bytes / sizeof(ElfW(Rela)); ++i) {
      const ElfW(Rela)& relocation = begin[i];
      uint32_t type = ELF64_R_TYPE(relocation.r_info);
      if (type != kJumpSlot && type != kGlobDat) continue;
      const auto& symbol =
          reinterpret_cast<const ElfW(Sym)*>(symbols)[ELF64_R_SYM(relocation.r_info)];
      std::string_view name(reinterpret_cast<const char*>(strings) + symbol.st_name);
      for (size_t r = 0; r < library.replacements.size(); ++r) {
        if (name != library.replacements[r].symbol) continue;
        uintptr_t slot = info->dlpi_addr + relocation.r_offset;
        bool read_only = slot >= relro_begin && slot < relro_end;
        if (Status s = write_slot(info, slot, library.replacements[r].function, read_only);
            !s.ok()) {
          return s;
        }
        library.replaced[r] = true;
      }
    }
  }
  return Status::OK();
}

int visit(dl_phdr_info* info, size_t, void* data) {
  auto& search = *static_cast<Search*>(data);
  std::string_view path = info->dlpi_name != nullptr ? info->dlpi_name : "";
  for (Library& library : search.libraries) {
    if (path.find(library.name) == std::string_view::npos) continue;
    library.found = true;
    if (Status s = patch(info, library); !s.ok() && search.status.ok()) search.status = s;
  }
  return 0;
}

Status install_once() {
  Search search;
  search.libraries = {
      {"libcaf_io.so",
       {{"accept", reinterpret_cast<void*>(&accept)}, {"recv", reinterpret_cast<void*>(&recv)}}},
      {"libcaf_openssl.so",
       {{"SSL_read", reinterpret_cast<void*>(&ssl_read)},
        {"SSL_write", reinterpret_cast<void*>(&ssl_write)},
        {"SSL_connect", reinterpret_cast<void*>(&ssl_connect)},
        {"SSL_accept", reinterpret_cast<void*>(&ssl_accept)}}},
  };
  for (Library& library : search.libraries) {
    library.replaced.assign(library.replacements.size(), false);
  }
  dl_iterate_phdr(&visit, &search);
  if (!search.status.ok()) return search.status;
  if (!search.libraries[0].found) {
    return errors::FailedPrecondition("libcaf_io is not loaded in this process");
  }
  for (const Library& library : search.libraries) {
    if (!library.found) continue;  // libcaf_openssl: loaded with the io library by troupe
    for (size_t r = 0; r < library.replacements.size(); ++r) {
      if (!library.replaced[r]) {
        return errors::Internal("{} calls no {} through its GOT: troupe cannot take it over",
                                library.name, library.replacements[r].symbol);
      }
    }
  }
  return Status::OK();
}

}  // namespace

Status install_in_caf_libraries() {
  static std::once_flag once;
  static Status result;
  std::call_once(once, [] { result = install_once(); });
  return result;
}

}  // namespace troupe::caf_call_hooks
