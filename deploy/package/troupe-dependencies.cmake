# What troupe's libraries need from the system, found the same way by troupe's own build
# (CMakeLists.txt) and by a program that uses an installed troupe (troupeConfig.cmake). Defines
# the imported targets troupe::caf (CAF 0.17's core, io and OpenSSL modules) and
# troupe::openblas, which have no CMake package files of their own on Debian.
include_guard(GLOBAL)

find_package(Threads REQUIRED)
find_package(CapnProto REQUIRED)
find_package(Eigen3 3.4 REQUIRED NO_MODULE)
find_package(fmt REQUIRED)
find_package(spdlog REQUIRED)  # the libraries' log lines (graph/core/logging.cpp)
find_package(nlohmann_json 3 REQUIRED)
find_package(ZLIB REQUIRED)
find_package(OpenSSL 1.1 REQUIRED)  # TLS between tasks (with CAF's OpenSSL module)
# The GPU device's CUDA runtime and cuBLAS, in a build with CUDA (TROUPE_HAVE_CUDA).
if(TROUPE_HAVE_CUDA)
  find_package(CUDAToolkit REQUIRED)
endif()

# CAF 0.17 ships neither CMake nor pkg-config files. Its API changed incompatibly in 0.18, so
# the version is checked here rather than by the compiler's first error.
find_path(CAF_INCLUDE_DIR caf/all.hpp)
if(NOT CAF_INCLUDE_DIR)
  message(FATAL_ERROR "troupe needs CAF 0.17 (Debian: libcaf-dev): caf/all.hpp not found; "
                      "set CAF_INCLUDE_DIR to the directory that holds caf/")
endif()
file(STRINGS ${CAF_INCLUDE_DIR}/caf/config.hpp caf_version_line
     REGEX "^#define CAF_VERSION [0-9]+")
string(REGEX MATCH "[0-9]+" caf_version "${caf_version_line}")
if(NOT caf_version OR caf_version LESS 1705 OR NOT caf_version LESS 1800)
  message(FATAL_ERROR "troupe needs CAF 0.17.5 or a later 0.17 (Debian: libcaf-dev); "
                      "${CAF_INCLUDE_DIR}/caf/config.hpp says CAF_VERSION ${caf_version}")
endif()
foreach(module core io openssl)
  string(TOUPPER ${module} upper)
  find_library(CAF_${upper}_LIBRARY caf_${module})
  if(NOT CAF_${upper}_LIBRARY)
    message(FATAL_ERROR "troupe needs CAF's ${module} library (libcaf_${module}, Debian: "
                        "libcaf-dev); set CAF_${upper}_LIBRARY to its path")
  endif()
endforeach()
if(NOT TARGET troupe::caf)
  add_library(troupe::caf INTERFACE IMPORTED GLOBAL)
  set_target_properties(troupe::caf PROPERTIES
    INTERFACE_SYSTEM_INCLUDE_DIRECTORIES ${CAF_INCLUDE_DIR}
    INTERFACE_INCLUDE_DIRECTORIES ${CAF_INCLUDE_DIR}
    INTERFACE_LINK_LIBRARIES "${CAF_OPENSSL_LIBRARY};${CAF_IO_LIBRARY};${CAF_CORE_LIBRARY};OpenSSL::SSL;OpenSSL::Crypto;Threads::Threads")
endif()

# float/double MatMul (devices/cpu/blas_gemm.cpp): Debian's pthread build of OpenBLAS, kept to
# one thread (blas_gemm.cpp stops its thread pool at load: devices own their threads). Not the
# serial build: it has no locks, and two devices' threads calling it at once get wrong products.
set(openblas_pthread ${CMAKE_LIBRARY_ARCHITECTURE}/openblas-pthread)
find_path(OPENBLAS_INCLUDE_DIR cblas.h PATHS /usr/include/${openblas_pthread} NO_DEFAULT_PATH)
find_library(OPENBLAS_LIBRARY openblas PATHS /usr/lib/${openblas_pthread} NO_DEFAULT_PATH)
if(NOT OPENBLAS_INCLUDE_DIR OR NOT OPENBLAS_LIBRARY)
  message(FATAL_ERROR "troupe needs OpenBLAS's pthread build (Debian: libopenblas-pthread-dev) "
                      "in /usr/lib/${openblas_pthread}; set OPENBLAS_INCLUDE_DIR and "
                      "OPENBLAS_LIBRARY to use another")
endif()
if(NOT TARGET troupe::openblas)
  add_library(troupe::openblas INTERFACE IMPORTED GLOBAL)
  set_target_properties(troupe::openblas PROPERTIES
    INTERFACE_SYSTEM_INCLUDE_DIRECTORIES ${OPENBLAS_INCLUDE_DIR}
    INTERFACE_INCLUDE_DIRECTORIES ${OPENBLAS_INCLUDE_DIR}
    INTERFACE_LINK_LIBRARIES ${OPENBLAS_LIBRARY})
endif()
