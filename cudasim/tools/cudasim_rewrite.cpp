// cudasim_rewrite: turns a CUDA .cu source file into C++ that the cudasim shim headers compile.
//
// Usage: cudasim_rewrite [-iquote DIR]... [-I DIR]... [--depfile FILE] INPUT.cu OUTPUT.cpp
//
// Why this exists: the simulator has no CUDA compiler. It compiles a student's .cu file as
// ordinary C++ against the shim headers in cudasim/include (which define __global__,
// __shared__, threadIdx, cudaMalloc, ...). Almost all CUDA source is already valid C++ with
// those headers; only a few constructs are not, and this tool rewrites exactly those:
//
//   * Kernel launches. `k<<<grid, block>>>(args)` is not C++. When an id-expression names the
//     kernel (`k`, `ns::k<float, 4>`, `H::template k<T>`), `::cudasim::launch_inline("k",
//     CUDASIM_INLINE_KERNEL(` is inserted before the name, `<<<` becomes `), ` and the matching
//     `>>>` becomes `)`, giving
//     `::cudasim::launch_inline("k", CUDASIM_INLINE_KERNEL(k), grid, block)(args)`.
//     The string is the kernel's name as written, for error messages; CUDASIM_INLINE_KERNEL(k)
//     (cudasim/execution.hpp) is a lambda that calls `k` by name with each thread's arguments.
//     Because the kernel is called rather than taken by address, overload resolution and
//     template argument deduction happen on that call with the launch's arguments, as nvcc
//     does: overloaded kernels and templates whose arguments are deduced (`k<<<g, b>>>(ptr)`
//     for `template <class T> __global__ void k(T*)`) work like any other, and the compiler
//     can inline the kernel into the loop that runs a block's threads. When no name can be
//     found before `<<<` (e.g. `(*table[i])<<<...>>>`), or the name is a member (`s.fp`,
//     `p->fp`), the launch goes through the function pointer alone: `<<<` becomes
//     `* ::cudasim::launch("kernel", ` (the member's name instead of "kernel"), so that the
//     expression before it is the left operand of an overloaded operator*.
//     The first `>>>` after `<<<` closes the configuration, as nvcc reads it: `>` and `>>`
//     inside it (comparisons, shifts, `threads_v<T> >>>`) are fine, but a template argument
//     list that ends right before it (`k<<<1, threads_v<T>>>>(p)`) is an error, as with nvcc,
//     rather than a launch that builds on the CPU and not for a GPU. `NULL` among the launch's
//     arguments becomes `nullptr` (see nullptrForNullArguments).
//   * Dynamic shared memory. `extern __shared__ T name[];` declares an array whose size is
//     chosen at launch time. Inside a function it becomes a local pointer,
//     `T* const name = reinterpret_cast<T*>(::cudasim::dynamic_shared_memory());`. At namespace
//     scope it becomes `static thread_local T* const name = reinterpret_cast<T*>(
//     ::cudasim::dynamic_shared_memory(&name));`: every worker OS thread keeps its block's
//     dynamic shared buffer at one fixed address, so a per-thread pointer initialised once
//     stays valid, and passing the pointer's own address lets the simulator's memory counters
//     tell loads of the pointer from loads of shared memory. The local form is preferred where
//     it is allowed because it needs no thread-local variable (and no initialisation guard).
//   * `static __shared__`. The shim defines `__shared__` as `static thread_local`, so an
//     explicit `static` would be repeated; it is dropped. `__shared__ alignas(N)` becomes
//     `alignas(N) __shared__`, where C++ allows the alignment specifier.
//   * `__CUDA_ARCH__` in device code. nvcc compiles a .cu file twice, and defines __CUDA_ARCH__
//     (e.g. 900) only in the pass for the GPU: `#if __CUDA_ARCH__ >= 700` inside a kernel keeps
//     its code on a GPU. The simulator compiles once, with __CUDA_ARCH__ undefined, as for the
//     host; such a kernel would lose that code and compute a wrong answer silently. So in
//     preprocessor lines inside the body of a `__global__` function, or of a `__device__` one
//     that is not also `__host__`, the word becomes `CUDASIM_DEVICE_ARCH` (defined by the shim's
//     cuda_runtime.h as the modelled GPU's, 900); `#ifdef`, `#ifndef` and `defined()` then read
//     it as nvcc's device pass would. At namespace scope, a version test in an `#if` or `#elif`
//     (`__CUDA_ARCH__ >= 700`, not `defined(__CUDA_ARCH__)`) is rewritten too: what it guards
//     there (`__device__` helpers for newer GPUs) exists only in the device pass, so the host
//     code cannot depend on it being absent. Elsewhere (host functions, `__host__ __device__`
//     functions, `#ifdef`/`defined` at namespace scope) it stays undefined, as in the host pass.
//   * `assert` in device code. In the body of a `__global__` or `__device__` function
//     (`__host__ __device__` included), `assert(` becomes `CUDASIM_DEVICE_ASSERT(`, which wraps
//     the program's own assert (so NDEBUG still turns it off) around a condition that, when
//     false in a kernel thread, fails the launch with cudaErrorAssert and names the kernel,
//     block and thread, as a GPU does, instead of letting the C library abort the whole process
//     (called from host code, it aborts as the C library's would).
//   * `memcpy`, `memmove` and `memset` in device code (unqualified, `std::` or `::`, and their
//     `__builtin_` forms). In the same bodies, a call becomes one of
//     `::cudasim::detail::device_memcpy`/`_memmove`/`_memset`, which count and check the bytes
//     as the loads and stores of a loop: the C library's functions are not instrumented, so a
//     kernel that copied with them moved bytes no counter saw and no memcheck checked.
//   * The device heap. In the same bodies `malloc(` and `free(` become
//     `::cudasim::detail::device_malloc(` and `device_free(`, `new T...` (not placement new)
//     becomes `new (::cudasim::detail::device_heap) T...`, and `delete p` / `delete[] p` become
//     `::cudasim::detail::device_delete(p)` / `device_delete_array(p)`: blocks of device memory
//     from a heap of cudaLimitMallocHeapSize bytes, as on a GPU, instead of host memory that a
//     kernel may not touch.
//   * Kernels known by address. After the closing brace of each kernel definition that is not
//     a template, on the same line, `CUDASIM_KNOWN_KERNEL(name, (parameters))` registers the
//     kernel with its parameter types when the program starts, as nvcc's runtime knows every
//     kernel: cudaLaunchKernel((void*)k, ...) and graph kernel nodes then work for a kernel the
//     program never launched with chevrons (see registerKernel for what is left out).
//   * Kernels with barriers. In a `__global__` definition whose own body calls __syncthreads
//     (or _count/_and/_or), those calls become `co_await ::cudasim::detail::await_syncthreads...`
//     and `return` becomes `co_return`: the kernel becomes a coroutine, whose threads the
//     simulator runs between barriers without switching stacks (see the section below). A
//     kernel whose body uses a macro that returns (`#define GUARD(c) if (!(c)) return;`) is
//     left on fibers instead: the macro's `return` is not in the kernel's text.
//   * Loop fission. Such a kernel whose barriers all threads of a block reach together also
//     gets a second version of its body, run as one loop over the block's threads per stretch
//     between barriers (see the section "Loop fission" below); the others get a comment at their
//     opening brace that says why not. This is the one rewrite that adds lines: each copied
//     stretch is preceded by `#line N`, and the version ends with a `#line` for its last line.
//
// Everything else is copied byte for byte. Nothing inside comments, string literals, character
// literals or raw string literals is ever changed; preprocessor lines are treated as code, so a
// launch inside a #define body is rewritten too.
//
// Project headers. Launches, `extern __shared__` and kernels with barriers in a header must be
// rewritten as much as in the .cu file, so the tool follows the file's quoted #includes
// (`#include "x.cuh"`, transitively), resolving each as the compiler does: next to the
// including file, then in the -iquote folders, then in the -I folders, in order. It is given
// only project folders (the build passes the course's and the submission's, never the
// simulator's cudasim/include or system folders), so `<...>` includes, system headers and the
// simulator's headers are never touched; a quoted include found nowhere is left to the
// compiler. A header that needs rewriting, or that includes one that does, is written to
// OUTPUT.headers/N/NAME (N counts the copies; one folder each, so that a copy's own folder
// holds nothing the original's did not), starting with `#line 1 "<absolute header path>"` and
// then the header's exact lines, so that diagnostics point at the real header. The #includes
// that reach a copy are rewritten to name it by a path relative to the includer's output, and
// every other resolved #include inside a copy names its header's absolute path (the copy no
// longer sits next to it); the .cu file's includes of unchanged headers are left as they are.
// Each header is read once (#pragma once and include guards work as before) and its macros
// count for the return-in-macro rule above. Copies an earlier run wrote and this one did not
// are removed. With --depfile, the tool writes a Make/Ninja depfile naming the input and every
// header it read, so that a build reruns it when one of them changes.
//
// Compiler diagnostics must point at the student's file and line, not at the generated file.
// The output therefore starts with `#line 1 "<absolute input path>"` and then has exactly the
// same lines as the input: replacements only insert or remove text within lines and never add
// or remove a line break, except the fissioned versions, whose lines are all under #line
// directives naming the lines they come from.
//
// Every output is written atomically (temporary file, then rename) and only when its content
// changes, so a build system that runs this tool on every build does not recompile needlessly.
// The header copies are written before the output.
//
// Exit status: 0 on success; 1 when the input or a header cannot be rewritten (a `<<<`
// without its `>>>`, `>>>>`), with a compiler-style `FILE:LINE: error: ...` message and no
// output; 2 on a bad command line or when a file cannot be read or written, with one line
// starting `cudasim_rewrite: `.
//
// Only the C++17 standard library is used, so the tool builds before anything else in the tree.

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <optional>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

namespace {

constexpr const char* kToolName = "cudasim_rewrite";
constexpr std::size_t kNotFound = std::string::npos;

// ---------------------------------------------------------------------------------------------
// Lexical classification
//
// The rewrite only needs to know, for every byte, whether it is code or part of a comment or a
// literal. This is far less than a real C++ lexer, but it must get the awkward cases right:
// comments continued with a backslash, escapes in literals, raw strings, and digit separators
// (the apostrophes in 1'000'000 do not start character literals).
// ---------------------------------------------------------------------------------------------

enum class Region : unsigned char { Code, Comment, Literal };

bool isAsciiDigit(char c) { return c >= '0' && c <= '9'; }

// Bytes 0x80 and above are accepted so that UTF-8 identifiers stay whole.
bool isIdentifierStart(char c) {
    const auto byte = static_cast<unsigned char>(c);
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '$' || byte >= 0x80;
}

bool isIdentifierChar(char c) { return isIdentifierStart(c) || isAsciiDigit(c); }

bool isBlank(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }

// Length of the line break starting at `pos` ("\n" or "\r\n"), or 0 if there is none.
std::size_t lineBreakLength(const std::string& text, std::size_t pos) {
    if (pos < text.size() && text[pos] == '\n') return 1;
    if (pos + 1 < text.size() && text[pos] == '\r' && text[pos + 1] == '\n') return 2;
    return 0;
}

// A line splice is a backslash immediately followed by a line break; the compiler joins the two
// physical lines, so for our purposes it is just whitespace.
bool isLineSpliceAt(const std::string& text, std::size_t pos) {
    return pos < text.size() && text[pos] == '\\' && lineBreakLength(text, pos + 1) > 0;
}

// End (exclusive) of a // comment starting at `pos`: the line break that ends it, unless that
// line break is spliced, in which case the comment continues on the next line.
std::size_t endOfLineComment(const std::string& text, std::size_t pos) {
    for (std::size_t i = pos + 2; i < text.size(); ++i) {
        if (text[i] != '\n') continue;
        std::size_t beforeBreak = i;
        if (beforeBreak > pos && text[beforeBreak - 1] == '\r') --beforeBreak;
        const bool spliced = beforeBreak > pos + 2 && text[beforeBreak - 1] == '\\';
        if (!spliced) return beforeBreak;
    }
    return text.size();
}

std::size_t endOfBlockComment(const std::string& text, std::size_t pos) {
    const std::size_t close = text.find("*/", pos + 2);
    return close == kNotFound ? text.size() : close + 2;
}

// End (exclusive) of a '...' or "..." literal whose opening quote is at `pos`. An unterminated
// literal stops at the end of its line, as the compiler would report it there; stopping keeps
// one stray quote from hiding the rest of the file.
std::size_t endOfQuotedLiteral(const std::string& text, std::size_t pos) {
    const char quote = text[pos];
    std::size_t i = pos + 1;
    while (i < text.size()) {
        const char c = text[i];
        if (c == '\\') {
            const std::size_t spliceBreak = lineBreakLength(text, i + 1);
            i += 1 + (spliceBreak > 0 ? spliceBreak : 1);
            continue;
        }
        if (c == quote) return i + 1;
        if (lineBreakLength(text, i) > 0) return i;
        ++i;
    }
    return text.size();
}

// End of a raw string literal R"delim( ... )delim" whose opening quote is at `quotePos`, or
// kNotFound if what follows the quote is not a valid raw string opening.
std::size_t endOfRawStringLiteral(const std::string& text, std::size_t quotePos) {
    constexpr std::size_t kMaxDelimiterLength = 16;
    const std::size_t openParen = text.find('(', quotePos + 1);
    if (openParen == kNotFound || openParen - quotePos - 1 > kMaxDelimiterLength) return kNotFound;
    const std::string delimiter = text.substr(quotePos + 1, openParen - quotePos - 1);
    if (delimiter.find_first_of(" ()\\\t\v\f\r\n\"") != kNotFound) return kNotFound;
    const std::size_t close = text.find(")" + delimiter + "\"", openParen + 1);
    return close == kNotFound ? text.size() : close + delimiter.size() + 2;
}

bool isRawStringPrefix(std::string_view word) {
    return word == "R" || word == "LR" || word == "uR" || word == "UR" || word == "u8R";
}

// End of a preprocessing number starting at `pos`. Consuming whole numbers is what keeps the
// digit separators in 1'000'000 or 0xFF'FF from being taken for character literals.
std::size_t endOfNumber(const std::string& text, std::size_t pos) {
    std::size_t i = pos + 1;
    while (i < text.size()) {
        const char c = text[i];
        const char next = i + 1 < text.size() ? text[i + 1] : '\0';
        if ((c == 'e' || c == 'E' || c == 'p' || c == 'P') && (next == '+' || next == '-')) {
            i += 2;
        } else if (isIdentifierChar(c) || c == '.') {
            ++i;
        } else if (c == '\'' && isIdentifierChar(next)) {
            i += 2;
        } else {
            break;
        }
    }
    return i;
}

std::size_t endOfIdentifier(const std::string& text, std::size_t pos) {
    std::size_t i = pos;
    while (i < text.size() && isIdentifierChar(text[i])) ++i;
    return i;
}

std::vector<Region> classifyRegions(const std::string& text) {
    std::vector<Region> regions(text.size(), Region::Code);
    auto mark = [&regions](std::size_t begin, std::size_t end, Region region) {
        std::fill(regions.begin() + static_cast<std::ptrdiff_t>(begin),
                  regions.begin() + static_cast<std::ptrdiff_t>(end), region);
    };

    std::size_t pos = 0;
    while (pos < text.size()) {
        const char c = text[pos];
        const char next = pos + 1 < text.size() ? text[pos + 1] : '\0';
        if (c == '/' && next == '/') {
            const std::size_t end = endOfLineComment(text, pos);
            mark(pos, end, Region::Comment);
            pos = end;
        } else if (c == '/' && next == '*') {
            const std::size_t end = endOfBlockComment(text, pos);
            mark(pos, end, Region::Comment);
            pos = end;
        } else if (c == '"' || c == '\'') {
            // An identifier right before the quote (L, u8, ...) is an encoding prefix; it was
            // consumed as an identifier and stays code, which is harmless.
            const std::size_t end = endOfQuotedLiteral(text, pos);
            mark(pos, end, Region::Literal);
            pos = end;
        } else if (isAsciiDigit(c) || (c == '.' && isAsciiDigit(next))) {
            pos = endOfNumber(text, pos);
        } else if (isIdentifierStart(c)) {
            const std::size_t wordEnd = endOfIdentifier(text, pos);
            const std::string_view word(text.data() + pos, wordEnd - pos);
            std::size_t rawEnd = kNotFound;
            if (wordEnd < text.size() && text[wordEnd] == '"' && isRawStringPrefix(word)) {
                rawEnd = endOfRawStringLiteral(text, wordEnd);
            }
            if (rawEnd != kNotFound) {
                mark(wordEnd, rawEnd, Region::Literal);
                pos = rawEnd;
            } else {
                pos = wordEnd;
            }
        } else {
            ++pos;
        }
    }
    return regions;
}

// ---------------------------------------------------------------------------------------------
// Source: the text plus its classification, with the small queries the rewrites need.
// ---------------------------------------------------------------------------------------------

class Source {
public:
    explicit Source(std::string text)
        : text_(std::move(text)), regions_(classifyRegions(text_)), directive_(text_.size(), false) {
        // Mark preprocessor directive lines (with their spliced continuations).
        std::size_t lineStart = 0;
        bool continued = false;
        while (lineStart < text_.size()) {
            std::size_t lineEnd = text_.find('\n', lineStart);
            if (lineEnd == kNotFound) lineEnd = text_.size();
            std::size_t first = lineStart;
            while (first < lineEnd && (text_[first] == ' ' || text_[first] == '\t')) ++first;
            const bool directive = continued || (first < lineEnd && text_[first] == '#' && isCode(first));
            if (directive) std::fill(directive_.begin() + static_cast<std::ptrdiff_t>(lineStart),
                                     directive_.begin() + static_cast<std::ptrdiff_t>(lineEnd), true);
            std::size_t last = lineEnd;
            if (last > lineStart && text_[last - 1] == '\r') --last;
            continued = directive && last > lineStart && text_[last - 1] == '\\';
            lineStart = lineEnd + 1;
        }
    }

    // Whether `pos` lies on a preprocessor directive line (#include, #define, ...).
    bool isDirective(std::size_t pos) const { return pos < directive_.size() && directive_[pos]; }

    const std::string& text() const { return text_; }
    std::size_t size() const { return text_.size(); }

    bool isCode(std::size_t pos) const { return pos < text_.size() && regions_[pos] == Region::Code; }
    bool isComment(std::size_t pos) const { return pos < text_.size() && regions_[pos] == Region::Comment; }
    bool isCodeChar(std::size_t pos, char c) const { return isCode(pos) && text_[pos] == c; }

    bool codeStartsWith(std::size_t pos, std::string_view s) const {
        if (pos + s.size() > text_.size()) return false;
        for (std::size_t i = 0; i < s.size(); ++i) {
            if (!isCodeChar(pos + i, s[i])) return false;
        }
        return true;
    }

    // Whether code whitespace (or a line splice) starts at `pos`.
    bool isCodeBlankAt(std::size_t pos) const {
        return isCode(pos) && (isBlank(text_[pos]) || isLineSpliceAt(text_, pos));
    }

    // Whether an identifier (or keyword) starts at `pos`, i.e. not in the middle of one.
    bool isWordStart(std::size_t pos) const {
        if (!isCode(pos) || !isIdentifierStart(text_[pos])) return false;
        return pos == 0 || !isCode(pos - 1) || !isIdentifierChar(text_[pos - 1]);
    }

    std::size_t wordEnd(std::size_t pos) const { return endOfIdentifier(text_, pos); }

    std::string_view wordAt(std::size_t pos) const {
        return std::string_view(text_.data() + pos, wordEnd(pos) - pos);
    }

    // First position at or after `pos` that is not code whitespace. Comments are not skipped:
    // a declaration with a comment inside is left alone rather than losing the comment.
    std::size_t skipBlanksForward(std::size_t pos) const {
        while (pos < text_.size() && isCode(pos)) {
            if (isLineSpliceAt(text_, pos)) {
                pos += 1 + lineBreakLength(text_, pos + 1);
            } else if (isBlank(text_[pos])) {
                ++pos;
            } else {
                break;
            }
        }
        return pos;
    }

    // Moves `end` (exclusive) back over whitespace, line splices and comments.
    std::size_t skipBlanksAndCommentsBackward(std::size_t end) const {
        while (end > 0) {
            const std::size_t last = end - 1;
            if (!isComment(last) && !isCodeBlankAt(last)) break;
            --end;
        }
        return end;
    }

    // Start of the identifier that ends exactly at `end` (exclusive), or kNotFound.
    std::size_t identifierEndingAt(std::size_t end) const {
        std::size_t begin = end;
        while (begin > 0 && isCode(begin - 1) && isIdentifierChar(text_[begin - 1])) --begin;
        if (begin == end || !isIdentifierStart(text_[begin])) return kNotFound;
        return begin;
    }

    // 1-based physical line number of `pos`, as a compiler would report it.
    std::size_t lineOf(std::size_t pos) const {
        return 1 + static_cast<std::size_t>(std::count(text_.begin(), text_.begin() + static_cast<std::ptrdiff_t>(pos), '\n'));
    }

    // The line breaks inside [begin, end), each with the splice backslash that precedes it if
    // any, so that a replacement can keep the line count and stay inside a multi-line #define.
    std::string lineBreaksIn(std::size_t begin, std::size_t end) const {
        std::string breaks;
        for (std::size_t i = begin; i < end; ++i) {
            if (text_[i] != '\n') continue;
            std::size_t breakStart = i;
            if (breakStart > begin && text_[breakStart - 1] == '\r') --breakStart;
            if (breakStart > begin && text_[breakStart - 1] == '\\') --breakStart;
            breaks.append(text_, breakStart, i + 1 - breakStart);
        }
        return breaks;
    }

    // The text of [begin, end) with every whitespace run (line splices and comments included)
    // collapsed to a single space and trimmed, leaving out the ranges in `excluded`.
    std::string normalizedText(std::size_t begin, std::size_t end,
                               const std::vector<std::pair<std::size_t, std::size_t>>& excluded = {}) const {
        std::string result;
        bool spacePending = false;
        std::size_t i = begin;
        while (i < end) {
            const auto excludedRange = std::find_if(excluded.begin(), excluded.end(),
                                                    [i](const auto& range) { return range.first == i; });
            if (excludedRange != excluded.end()) {
                spacePending = true;
                i = excludedRange->second;
            } else if (isComment(i) || isCodeBlankAt(i)) {
                spacePending = true;
                ++i;
            } else {
                if (spacePending && !result.empty()) result += ' ';
                spacePending = false;
                result += text_[i];
                ++i;
            }
        }
        return result;
    }

private:
    std::string text_;
    std::vector<Region> regions_;
    std::vector<bool> directive_;
};

// ---------------------------------------------------------------------------------------------
// Edits: replacements of byte ranges of the input, applied all at once at the end.
// ---------------------------------------------------------------------------------------------

struct Edit {
    std::size_t begin;
    std::size_t end;
    std::string replacement;
};

std::string applyEdits(const std::string& text, std::vector<Edit> edits) {
    std::stable_sort(edits.begin(), edits.end(), [](const Edit& a, const Edit& b) { return a.begin < b.begin; });
    std::string result;
    result.reserve(text.size() + edits.size() * 48);
    std::size_t copied = 0;
    for (const Edit& edit : edits) {
        // Edits never overlap in valid CUDA; should odd input produce an overlap, the later
        // edit is dropped rather than producing garbage.
        if (edit.begin < copied) continue;
        result.append(text, copied, edit.begin - copied);
        result += edit.replacement;
        copied = edit.end;
    }
    result.append(text, copied, kNotFound);
    return result;
}

struct RewriteError : std::runtime_error {
    RewriteError(std::size_t lineNumber, const std::string& message) : std::runtime_error(message), line(lineNumber) {}
    std::size_t line;
};

// ---------------------------------------------------------------------------------------------
// Kernel launches: k<<<config>>>(args) -> ::cudasim::launch_inline("k", ..., config)(args)
// ---------------------------------------------------------------------------------------------

// Whether the '<' or '>' at `pos` is part of an operator token (<<, <=, >=, >>=, ->, <=>)
// rather than a template angle bracket. `>>` is deliberately not listed: since C++11 it closes
// two template argument lists, while `<<` is always a shift.
bool isPartOfOperator(const Source& source, std::size_t pos) {
    const std::string& text = source.text();
    const auto codeCharAt = [&source, &text](std::size_t i) { return source.isCode(i) ? text[i] : '\0'; };
    const char previous = pos > 0 ? codeCharAt(pos - 1) : '\0';
    const char next = codeCharAt(pos + 1);
    if (text[pos] == '<') return previous == '<' || next == '<' || next == '=';
    const char afterNext = codeCharAt(pos + 2);
    return next == '=' || (next == '>' && afterNext == '=') || previous == '-' ||
           (previous == '=' && pos > 1 && codeCharAt(pos - 2) == '<');
}

// Given the position of a '>' that closes a template argument list, finds its '<'. Brackets
// are tracked so that comparisons like (N > 2) inside the arguments do not count.
std::size_t matchingAngleOpen(const Source& source, std::size_t closePos) {
    int angleDepth = 0;
    int bracketDepth = 0;
    for (std::size_t i = closePos + 1; i-- > 0;) {
        if (!source.isCode(i)) continue;
        switch (source.text()[i]) {
            case ')':
            case ']':
                ++bracketDepth;
                break;
            case '(':
            case '[':
                if (bracketDepth == 0) return kNotFound;
                --bracketDepth;
                break;
            case ';':
            case '{':
            case '}':
                return kNotFound;  // left the statement: this was no template argument list
            case '>':
                if (bracketDepth == 0 && !isPartOfOperator(source, i)) ++angleDepth;
                break;
            case '<':
                if (bracketDepth == 0 && !isPartOfOperator(source, i) && --angleDepth == 0) return i;
                break;
            default:
                break;
        }
    }
    return kNotFound;
}

// If `end` (exclusive, past any blanks) is preceded by a `::` qualifier separator, returns
// where that `::` starts; otherwise kNotFound.
std::size_t scopeOperatorEndingAt(const Source& source, std::size_t end) {
    if (end >= 2 && source.codeStartsWith(end - 2, "::")) return end - 2;
    return kNotFound;
}

// Finds the start of the id-expression (identifiers, `::` qualifiers, template argument lists)
// that ends at `end`, or kNotFound if there is none. Scans backwards one component at a time.
std::size_t kernelNameStart(const Source& source, std::size_t end) {
    std::size_t pos = end;
    for (;;) {
        if (pos > 0 && source.isCodeChar(pos - 1, '>')) {
            const std::size_t angleOpen = matchingAngleOpen(source, pos - 1);
            if (angleOpen == kNotFound) return kNotFound;
            pos = source.skipBlanksAndCommentsBackward(angleOpen);
        }
        const std::size_t identifierStart = source.identifierEndingAt(pos);
        if (identifierStart == kNotFound) return kNotFound;

        // Look for a qualifier before the identifier, allowing `ns::template k<...>`.
        std::size_t before = source.skipBlanksAndCommentsBackward(identifierStart);
        const std::size_t previousWord = source.identifierEndingAt(before);
        if (previousWord != kNotFound && source.wordAt(previousWord) == "template") {
            before = source.skipBlanksAndCommentsBackward(previousWord);
        }
        const std::size_t scopeOperator = scopeOperatorEndingAt(source, before);
        if (scopeOperator == kNotFound) return identifierStart;

        const std::size_t beforeScope = source.skipBlanksAndCommentsBackward(scopeOperator);
        const bool qualifierFollows =
            beforeScope > 0 && source.isCode(beforeScope - 1) &&
            (isIdentifierChar(source.text()[beforeScope - 1]) || source.text()[beforeScope - 1] == '>');
        if (!qualifierFollows) return scopeOperator;  // a leading `::` (global namespace)
        pos = beforeScope;
    }
}

// Escapes a kernel name for use inside a C string literal.
std::string escapeForStringLiteral(std::string_view text) {
    std::string escaped;
    for (const char c : text) {
        if (c == '"' || c == '\\') {
            escaped += '\\';
            escaped += c;
        } else if (static_cast<unsigned char>(c) < 0x20) {
            // Only reachable through a literal inside template arguments; keep the C string valid.
            char octal[8];
            std::snprintf(octal, sizeof octal, "\\%03o", static_cast<unsigned>(static_cast<unsigned char>(c)));
            escaped += octal;
        } else {
            escaped += c;
        }
    }
    return escaped;
}

// The `>>>` closing the launch whose `<<<` ends just before `searchFrom`, or kNotFound if the
// file ends or another `<<<` comes first (launches cannot nest: a launch is not an expression
// with a value). Like nvcc, the first `>>>` closes the launch, even where a template argument
// list ends right before it (`threads_v<T>>>>`): nvcc rejects that, and so does the rewrite
// (rewriteLaunch), rather than accept on the CPU what fails on a GPU.
std::size_t launchClose(const Source& source, std::size_t searchFrom) {
    for (std::size_t i = searchFrom; i + 3 <= source.size(); ++i) {
        if (source.codeStartsWith(i, ">>>")) return i;
        if (source.codeStartsWith(i, "<<<")) return kNotFound;
    }
    return kNotFound;
}

std::size_t endOfParenthesized(const Source& source, std::size_t openPos);

// `NULL` among a launch's arguments becomes `nullptr`. With nvcc, NULL (an integer 0 that is a
// null pointer constant) converts to the kernel's pointer parameter; the simulator hands the
// arguments on through a generic call, after which NULL is only a `long` that no longer
// converts to a pointer, while nullptr still does. (A literal 0 for a pointer stays an error.)
void nullptrForNullArguments(const Source& source, std::size_t afterLaunch, std::vector<Edit>& edits) {
    const std::size_t argumentsOpen = source.skipBlanksForward(afterLaunch);
    if (!source.isCodeChar(argumentsOpen, '(')) return;
    const std::size_t argumentsEnd = endOfParenthesized(source, argumentsOpen);
    if (argumentsEnd == kNotFound) return;
    for (std::size_t i = argumentsOpen; i < argumentsEnd; ++i) {
        if (!source.isWordStart(i)) continue;
        if (source.wordAt(i) == "NULL") edits.push_back({i, i + 4, "nullptr"});
        i = source.wordEnd(i) - 1;
    }
}

void rewriteLaunch(const Source& source, std::size_t openPos, std::vector<Edit>& edits) {
    const std::size_t nameEnd = source.skipBlanksAndCommentsBackward(openPos);
    // `operator<<<T>` (operator<< followed by a template argument list) is valid C++, not a launch.
    const std::size_t lastWord = source.identifierEndingAt(nameEnd);
    if (lastWord != kNotFound && source.wordAt(lastWord) == "operator") return;

    const std::size_t nameBegin = kernelNameStart(source, nameEnd);
    const std::string name = nameBegin == kNotFound ? std::string() : source.normalizedText(nameBegin, nameEnd);

    const std::size_t closePos = launchClose(source, openPos + 3);
    if (closePos == kNotFound) throw RewriteError(source.lineOf(openPos), "'<<<' without matching '>>>'");
    if (source.isCodeChar(closePos + 3, '>')) {
        throw RewriteError(source.lineOf(closePos),
                           "'>>>>': the first '>>>' closes the launch configuration, as nvcc reads it; "
                           "a template argument list that ends right before '>>>' needs a space: '> >>>'");
    }

    // A member (`s.fp`, `p->fp`) is a function pointer: the whole expression before `<<<` is
    // the kernel, as in an unnamed launch.
    const std::size_t beforeName = nameBegin == kNotFound ? 0 : source.skipBlanksAndCommentsBackward(nameBegin);
    const bool member = nameBegin != kNotFound && beforeName > 0 &&
                        (source.isCodeChar(beforeName - 1, '.') ||
                         (beforeName > 1 && source.codeStartsWith(beforeName - 2, "->")));
    if (name.empty() || member) {
        const std::string label = name.empty() ? "kernel" : escapeForStringLiteral(name);
        edits.push_back({openPos, openPos + 3, "* ::cudasim::launch(\"" + label + "\", "});
    } else {
        // The name moves into the launch: `::cudasim::launch_inline("k", CUDASIM_INLINE_KERNEL(`
        // is inserted before it and `<<<` becomes `), `. The kernel is then called by name, so
        // that overload resolution and template argument deduction happen on the call itself.
        edits.push_back({nameBegin, nameBegin,
                         "::cudasim::launch_inline(\"" + escapeForStringLiteral(name) + "\", CUDASIM_INLINE_KERNEL("});
        edits.push_back({openPos, openPos + 3, "), "});
    }
    edits.push_back({closePos, closePos + 3, ")"});
    nullptrForNullArguments(source, closePos + 3, edits);
}

// ---------------------------------------------------------------------------------------------
// Dynamic shared memory: extern __shared__ TYPE NAME[];
// ---------------------------------------------------------------------------------------------

// Position just past the ')' matching the '(' at `openPos`, or kNotFound.
std::size_t endOfParenthesized(const Source& source, std::size_t openPos) {
    int depth = 0;
    for (std::size_t i = openPos; i < source.size(); ++i) {
        if (!source.isCode(i)) continue;
        const char c = source.text()[i];
        if (c == '(') ++depth;
        if (c == ')' && --depth == 0) return i + 1;
        if (c == ';' || c == '{' || c == '}') return kNotFound;
    }
    return kNotFound;
}

// If an `extern __shared__ TYPE NAME[];` declaration starts at `externPos` (the word extern),
// returns the edit replacing it. `__shared__` may stand anywhere among the specifiers, as C++
// allows (`extern float __shared__ NAME[];` in NVIDIA's samples). Anything else (a sized array,
// several declarators, a comment inside the declaration) is left for the compiler to judge.
std::optional<Edit> rewriteDynamicSharedDeclaration(const Source& source, std::size_t externPos,
                                                    bool insideFunction) {
    std::size_t pos = source.skipBlanksForward(source.wordEnd(externPos));

    const std::size_t typeBegin = pos;
    // Left out of TYPE: __align__(...) specifiers and the word __shared__.
    std::vector<std::pair<std::size_t, std::size_t>> leftOut;
    bool shared = false;
    std::optional<std::pair<std::size_t, std::size_t>> lastIdentifier;  // the NAME, once at '['
    while (!source.isCodeChar(pos, '[')) {
        if (!source.isCode(pos)) return std::nullopt;
        const char c = source.text()[pos];
        if (source.isWordStart(pos)) {
            const std::size_t end = source.wordEnd(pos);
            if (source.wordAt(pos) == "__shared__") {
                if (shared) return std::nullopt;
                shared = true;
                leftOut.emplace_back(pos, end);
                lastIdentifier.reset();
                pos = end;
            } else if (source.wordAt(pos) == "__align__") {
                const std::size_t openParen = source.skipBlanksForward(end);
                if (!source.isCodeChar(openParen, '(')) return std::nullopt;
                const std::size_t alignEnd = endOfParenthesized(source, openParen);
                if (alignEnd == kNotFound) return std::nullopt;
                leftOut.emplace_back(pos, alignEnd);
                lastIdentifier.reset();
                pos = alignEnd;
            } else {
                lastIdentifier = std::make_pair(pos, end);
                pos = end;
            }
        } else if (isAsciiDigit(c)) {
            lastIdentifier.reset();
            pos = endOfNumber(source.text(), pos);
        } else if (c == ':' || c == '<' || c == '>' || c == ',' || c == '*') {
            lastIdentifier.reset();
            ++pos;
        } else {
            return std::nullopt;
        }
        pos = source.skipBlanksForward(pos);
    }
    if (!shared || !lastIdentifier) return std::nullopt;

    const std::size_t closeBracket = source.skipBlanksForward(pos + 1);
    if (!source.isCodeChar(closeBracket, ']')) return std::nullopt;
    // Further extents make rows of a fixed size: `extern __shared__ T tile[][N];`.
    const std::size_t extentsBegin = source.skipBlanksForward(closeBracket + 1);
    std::size_t extentsEnd = extentsBegin;
    while (source.isCodeChar(extentsEnd, '[')) {
        int depth = 0;
        std::size_t i = extentsEnd;
        for (; i < source.size(); ++i) {
            if (!source.isCode(i)) return std::nullopt;
            const char c = source.text()[i];
            if (c == ';' || c == '{' || c == '}') return std::nullopt;
            if (c == '[') ++depth;
            if (c == ']' && --depth == 0) break;
        }
        if (i >= source.size()) return std::nullopt;
        extentsEnd = source.skipBlanksForward(i + 1);
    }
    const std::size_t semicolon = extentsEnd;
    if (!source.isCodeChar(semicolon, ';')) return std::nullopt;

    const auto [nameBegin, nameEnd] = *lastIdentifier;
    const std::string type = source.normalizedText(typeBegin, nameBegin, leftOut);
    if (type.empty()) return std::nullopt;
    const std::string name = source.text().substr(nameBegin, nameEnd - nameBegin);
    // A pointer to the first element: `T* const name`, or for rows `T (* const name)[N]`.
    const std::string extents = extentsEnd > extentsBegin ? source.normalizedText(extentsBegin, extentsEnd) : "";
    const std::string pointerType = extents.empty() ? type + "*" : type + " (*)" + extents;
    const std::string declarator = extents.empty() ? type + "* const " + name : type + " (* const " + name + ")" + extents;

    const std::size_t declarationEnd = semicolon + 1;
    std::string replacement =
        insideFunction ? declarator + " = reinterpret_cast<" + pointerType + ">(::cudasim::dynamic_shared_memory());"
                       : "static thread_local " + declarator + " = reinterpret_cast<" + pointerType +
                             ">(::cudasim::dynamic_shared_memory(&" + name + "));";
    replacement += source.lineBreaksIn(externPos, declarationEnd);
    return Edit{externPos, declarationEnd, std::move(replacement)};
}

// ---------------------------------------------------------------------------------------------
// Kernels with barriers become coroutines
//
// In a kernel definition whose own body calls __syncthreads (or _count/_and/_or), every such
// call becomes `co_await ::cudasim::detail::await_syncthreads...(...)` and every `return`
// becomes `co_return`, which makes the kernel a coroutine (cudasim/device_functions.hpp
// gives void functions a promise type). A thread's live locals then sit in a small frame, and
// the simulator runs the code between two barriers as a loop over the block's threads instead
// of switching stacks at every barrier.
//
// Only what is certainly safe is converted; anything else keeps the fiber-based barrier, which
// is slower but handles everything. A kernel is left alone when its body contains a lambda
// (its `return`s and barriers would belong to the lambda), a local class, try/catch (no
// co_await in a handler), coroutine keywords already, or a barrier name that is not a plain
// call. Barriers in __device__ functions are never converted: those functions are not
// coroutines, and their callers could not tell.
//
// A `return` can also hide in a macro (`#define GUARD(c) if (!(c)) return;`): its body is not
// in the kernel's text, so the rewrite cannot make it `co_return`, and a plain `return` in a
// coroutine does not compile. A kernel whose body names a macro that returns is therefore left
// on fibers too. The macros are those #defined in the file or in the project headers it
// includes (the ones the rewrite reads, see "Project headers"), wherever they are defined or
// #undef'd: a macro returns when its body says `return` or names a macro that returns. Only
// speed is lost when a name is taken for such a macro where it is not one.
// ---------------------------------------------------------------------------------------------

using NameSet = std::set<std::string, std::less<>>;

// Where the preprocessor directive whose '#' is at `hashPos` names its directive ("define",
// "include", ...): the position of that word, or kNotFound when `hashPos` does not start a
// directive.
std::size_t directiveWordAt(const Source& source, std::size_t hashPos) {
    if (!source.isCodeChar(hashPos, '#') || !source.isDirective(hashPos)) return kNotFound;
    for (std::size_t i = hashPos; i-- > 0 && source.text()[i] != '\n';) {
        if (source.text()[i] != ' ' && source.text()[i] != '\t') return kNotFound;  // not the line's first token
    }
    std::size_t pos = hashPos + 1;
    while (pos < source.size() && (source.text()[pos] == ' ' || source.text()[pos] == '\t')) ++pos;
    return source.isWordStart(pos) ? pos : kNotFound;
}

// The directives of `source` as the positions of their names ("define" in `#define X`).
std::vector<std::size_t> directiveWords(const Source& source) {
    std::vector<std::size_t> words;
    for (std::size_t pos = source.text().find('#'); pos != kNotFound; pos = source.text().find('#', pos + 1)) {
        const std::size_t word = directiveWordAt(source, pos);
        if (word != kNotFound) words.push_back(word);
    }
    return words;
}

// End (exclusive) of the preprocessor directive that contains `pos`: the first line break that
// is not spliced.
std::size_t endOfDirective(const Source& source, std::size_t pos) {
    const std::string& text = source.text();
    for (std::size_t i = text.find('\n', pos); i != kNotFound; i = text.find('\n', i + 1)) {
        std::size_t beforeBreak = i;
        if (beforeBreak > pos && text[beforeBreak - 1] == '\r') --beforeBreak;
        if (beforeBreak == pos || text[beforeBreak - 1] != '\\') return i;
    }
    return text.size();
}

// A #define of a source: its name, where its body starts (after a function-like macro's
// parameters) and ends.
struct MacroDefinition {
    std::size_t name, body, end;
    bool functionLike;
};
std::vector<MacroDefinition> macroDefinitions(const Source& source) {
    std::vector<MacroDefinition> macros;
    for (const std::size_t word : directiveWords(source)) {
        if (source.wordAt(word) != "define") continue;
        const std::size_t name = source.skipBlanksForward(source.wordEnd(word));
        const std::size_t end = endOfDirective(source, word);
        if (!source.isWordStart(name) || name >= end) continue;
        std::size_t body = source.wordEnd(name);
        const bool functionLike = source.isCodeChar(body, '(');
        if (functionLike) {
            while (body < end && !source.isCodeChar(body, ')')) ++body;
            if (body < end) ++body;
        }
        macros.push_back({name, body, end, functionLike});
    }
    return macros;
}

// The macros #defined in `sources` that return (see above).
NameSet returningMacros(const std::vector<const Source*>& sources) {
    std::vector<std::pair<std::string, NameSet>> macros;  // name, the words of its body
    for (const Source* source : sources) {
        for (const MacroDefinition& macro : macroDefinitions(*source)) {
            NameSet words;
            for (std::size_t i = macro.body; i < macro.end; ++i) {
                if (!source->isWordStart(i)) continue;
                words.emplace(source->wordAt(i));
                i = source->wordEnd(i) - 1;
            }
            macros.emplace_back(std::string(source->wordAt(macro.name)), std::move(words));
        }
    }
    NameSet returning{"return"};
    for (bool grew = true; grew;) {
        grew = false;
        for (const auto& [name, words] : macros) {
            if (returning.count(name) != 0) continue;
            const bool returns = std::any_of(words.begin(), words.end(),
                                             [&returning](const std::string& word) { return returning.count(word) != 0; });
            if (returns) grew = returning.insert(name).second;
        }
    }
    returning.erase("return");
    return returning;
}

struct BarrierName {
    std::string_view name;
    std::string_view awaitable;
};
constexpr BarrierName kBarrierNames[] = {
    {"__syncthreads", "co_await ::cudasim::detail::await_syncthreads"},
    {"__syncthreads_count", "co_await ::cudasim::detail::await_syncthreads_count"},
    {"__syncthreads_and", "co_await ::cudasim::detail::await_syncthreads_and"},
    {"__syncthreads_or", "co_await ::cudasim::detail::await_syncthreads_or"},
};

const BarrierName* barrierNamed(std::string_view word) {
    for (const BarrierName& barrier : kBarrierNames)
        if (barrier.name == word) return &barrier;
    return nullptr;
}

// The last code character before `pos`, skipping blanks and comments, or '\0'; `inLiteral` says
// whether it ends a string or character literal.
char previousSignificant(const Source& source, std::size_t pos, bool& inLiteral) {
    const std::size_t end = source.skipBlanksAndCommentsBackward(pos);
    inLiteral = end > 0 && !source.isCode(end - 1);
    return end > 0 ? source.text()[end - 1] : '\0';
}

// Position just past the '}' matching the '{' at `openPos`, or kNotFound.
std::size_t endOfBraced(const Source& source, std::size_t openPos) {
    int depth = 0;
    for (std::size_t i = openPos; i < source.size(); ++i) {
        if (!source.isCode(i)) continue;
        if (source.text()[i] == '{') ++depth;
        if (source.text()[i] == '}' && --depth == 0) return i + 1;
    }
    return kNotFound;
}

// Where the declaration that contains `pos` starts: just after the previous ';', '{' or '}'.
// (Preprocessor lines in between are part of the range; the callers skip them.)
std::size_t declarationStart(const Source& source, std::size_t pos) {
    while (pos > 0) {
        const std::size_t i = pos - 1;
        if (source.isCode(i) && (source.text()[i] == ';' || source.text()[i] == '{' || source.text()[i] == '}')) break;
        pos = i;
    }
    return pos;
}

// For the `__global__` at `globalPos`: if it starts a kernel definition that can be converted,
// adds the edits that make it a coroutine. Returns where the body starts (so that the caller
// goes on rewriting launches and shared memory inside it), or kNotFound for a declaration.
std::size_t convertKernelWithBarriers(const Source& source, std::size_t globalPos, const NameSet& returningMacros,
                                      std::vector<Edit>& edits) {
    // The declaration up to its body: the first '{' or ';' outside parentheses.
    std::size_t bodyOpen = kNotFound;
    bool returnsVoid = false;
    bool deducedType = false;
    int parenDepth = 0;
    for (std::size_t i = declarationStart(source, globalPos); i < source.size(); ++i) {
        if (!source.isCode(i) || source.isDirective(i)) continue;
        const char c = source.text()[i];
        if (source.isWordStart(i)) {
            const std::string_view word = source.wordAt(i);
            if (parenDepth == 0 && word == "void") returnsVoid = true;
            if (parenDepth == 0 && (word == "auto" || word == "decltype")) deducedType = true;
            i = source.wordEnd(i) - 1;
            continue;
        }
        if (c == '(') ++parenDepth;
        if (c == ')') --parenDepth;
        if (parenDepth == 0 && (c == ';' || c == '}')) return kNotFound;  // a declaration only
        if (parenDepth == 0 && c == '{') {
            bodyOpen = i;
            break;
        }
    }
    if (bodyOpen == kNotFound) return kNotFound;
    const std::size_t bodyEnd = endOfBraced(source, bodyOpen);
    if (bodyEnd == kNotFound || !returnsVoid || deducedType) return bodyOpen;

    std::vector<Edit> kernelEdits;
    bool hasBarrier = false;
    for (std::size_t i = bodyOpen + 1; i + 1 < bodyEnd; ++i) {
        if (!source.isCode(i)) continue;
        const char c = source.text()[i];
        if (c == '[') {
            bool afterLiteral = false;
            const char before = previousSignificant(source, i, afterLiteral);
            const bool subscript = afterLiteral || isIdentifierChar(before) || before == ')' || before == ']';
            if (!subscript || source.isCodeChar(i + 1, '[')) return bodyOpen;  // a lambda or an attribute
            continue;
        }
        if (isAsciiDigit(c)) {
            i = endOfNumber(source.text(), i) - 1;
            continue;
        }
        if (!source.isWordStart(i)) continue;
        const std::string_view word = source.wordAt(i);
        const std::size_t wordEnd = source.wordEnd(i);
        if (word == "struct" || word == "class" || word == "union" || word == "try" || word == "catch" ||
            word == "co_await" || word == "co_return" || word == "co_yield" || returningMacros.count(word) != 0) {
            return bodyOpen;
        }
        if (word == "return") {
            kernelEdits.push_back({i, wordEnd, "co_return"});
        } else if (const BarrierName* barrier = barrierNamed(word)) {
            bool afterLiteral = false;
            const char before = previousSignificant(source, i, afterLiteral);
            const bool called = source.isCodeChar(source.skipBlanksForward(wordEnd), '(');
            const std::size_t beforeEnd = source.skipBlanksAndCommentsBackward(i);
            const bool qualified = before == '.' || (beforeEnd >= 2 && (source.codeStartsWith(beforeEnd - 2, "::") ||
                                                                         source.codeStartsWith(beforeEnd - 2, "->")));
            if (!called || qualified) return bodyOpen;
            kernelEdits.push_back({i, wordEnd, std::string(barrier->awaitable)});
            hasBarrier = true;
        }
        i = wordEnd - 1;
    }
    if (hasBarrier) edits.insert(edits.end(), kernelEdits.begin(), kernelEdits.end());
    return bodyOpen;
}

// For the kernel definition whose `__global__` is at `globalPos` and whose body opens at
// `bodyOpen`: an insertion right after the body's closing brace, on the same line, of
// `CUDASIM_KNOWN_KERNEL(name, (parameters))`, which registers the kernel with its parameter
// types when the program starts (cudasim/execution.hpp). nvcc's runtime knows every kernel of
// a program; the simulator otherwise knows only those it saw launched or named with their type,
// and cudaLaunchKernel((void*)k, ...) or a graph kernel node of a kernel never launched before
// would fail. The cast to the definition's own parameter list picks it among overloads. Left
// out, and then known as before: templates (no single function to register), qualified
// definitions (`ns::k`), parameter lists with default arguments, preprocessor lines or line
// splices, and declarations whose parameter list cannot be told apart.
std::optional<Edit> registerKernel(const Source& source, std::size_t globalPos, std::size_t bodyOpen) {
    const std::size_t declStart = declarationStart(source, globalPos);
    std::size_t paramsOpen = kNotFound, paramsClose = kNotFound;
    bool returnsVoid = false;
    int depth = 0;
    for (std::size_t i = declStart; i < bodyOpen; ++i) {
        if (!source.isCode(i) || source.isDirective(i)) continue;
        if (source.isWordStart(i)) {
            const std::string_view word = source.wordAt(i);
            if (word == "template" || word == "operator") return std::nullopt;
            if (depth == 0 && word == "void") returnsVoid = true;
            i = source.wordEnd(i) - 1;
            continue;
        }
        const char c = source.text()[i];
        if (c == '(' && depth++ == 0) paramsOpen = i;
        if (c == ')' && --depth == 0) paramsClose = i;
    }
    if (!returnsVoid || depth != 0 || paramsOpen == kNotFound || paramsClose == kNotFound) return std::nullopt;
    const std::size_t nameEnd = source.skipBlanksAndCommentsBackward(paramsOpen);
    const std::size_t nameStart = source.identifierEndingAt(nameEnd);
    if (nameStart == kNotFound || !source.isWordStart(nameStart)) return std::nullopt;
    const std::string_view name = source.wordAt(nameStart);
    if (name.substr(0, 2) == "__" || name == "alignas" || name == "decltype") return std::nullopt;  // an attribute
    const std::size_t beforeName = source.skipBlanksAndCommentsBackward(nameStart);
    if (beforeName >= 2 && source.codeStartsWith(beforeName - 2, "::")) return std::nullopt;
    for (std::size_t i = paramsOpen + 1; i < paramsClose; ++i) {
        if (source.isCodeChar(i, '=') || source.isDirective(i) || (source.isCode(i) && isLineSpliceAt(source.text(), i)))
            return std::nullopt;
    }
    const std::size_t bodyEnd = endOfBraced(source, bodyOpen);
    if (bodyEnd == kNotFound) return std::nullopt;
    const std::string parameters = source.normalizedText(paramsOpen + 1, paramsClose);
    return Edit{bodyEnd, bodyEnd, " CUDASIM_KNOWN_KERNEL(" + std::string(name) + ", (" + parameters + "))"};
}

// ---------------------------------------------------------------------------------------------
// The whole rewrite
// ---------------------------------------------------------------------------------------------

// Whether the `{` at `bracePos` opens a namespace, a linkage block or a class body (true), or
// a function body, block or initializer (false). Looks at the declaration the brace ends: the
// code after the previous ';', '{' or '}'.
bool opensNonCodeScope(const Source& source, std::size_t bracePos) {
    bool sawParenthesis = false;
    std::string firstWord;
    for (std::size_t i = declarationStart(source, bracePos); i < bracePos; ++i) {
        if (!source.isCode(i) || source.isDirective(i)) continue;
        if (source.text()[i] == '(') sawParenthesis = true;
        if (firstWord.empty() && source.isWordStart(i)) {
            const std::string_view word = source.wordAt(i);
            if (word == "template") {  // skip `template <...>`
                i = source.wordEnd(i);
                continue;
            }
            if (word != "inline" && word != "export") firstWord = std::string(word);
        }
    }
    if (firstWord == "namespace") return true;
    if (firstWord == "extern") return !sawParenthesis;  // extern "C" { ... } but not a function
    const bool classHead = firstWord == "struct" || firstWord == "class" || firstWord == "union" || firstWord == "enum";
    return classHead && !sawParenthesis;
}

// Whether the brace at `bracePos` opens the body of a function that runs on the device: its
// declaration says `__global__`, or `__device__`, without `__host__` unless `alsoHost` (then
// a `__host__ __device__` function counts too).
bool opensDeviceFunction(const Source& source, std::size_t bracePos, bool alsoHost) {
    bool global = false, device = false, host = false;
    for (std::size_t i = declarationStart(source, bracePos); i < bracePos; ++i) {
        if (!source.isCode(i) || source.isDirective(i) || !source.isWordStart(i)) continue;
        const std::string_view word = source.wordAt(i);
        global = global || word == "__global__";
        device = device || word == "__device__";
        host = host || word == "__host__";
        i = source.wordEnd(i) - 1;
    }
    return global || (device && (alsoHost || !host));
}

// `__shared__ alignas(N) T x;` (nvcc accepts it; NVIDIA's samples write it) becomes
// `alignas(N) __shared__ T x;`: `__shared__` is `static thread_local` here, and C++ allows an
// alignment specifier before the declaration's specifiers but not among them. Only when the
// two stand on one line, so that no line moves.
std::optional<Edit> alignasBeforeShared(const Source& source, std::size_t sharedPos) {
    const std::size_t sharedEnd = source.wordEnd(sharedPos);
    const std::size_t alignasPos = source.skipBlanksForward(sharedEnd);
    if (!source.isWordStart(alignasPos) || source.wordAt(alignasPos) != "alignas") return std::nullopt;
    const std::size_t open = source.skipBlanksForward(source.wordEnd(alignasPos));
    if (!source.isCodeChar(open, '(')) return std::nullopt;
    const std::size_t close = endOfParenthesized(source, open);
    if (close == kNotFound || !source.lineBreaksIn(sharedPos, close).empty()) return std::nullopt;
    const std::string specifier = source.text().substr(alignasPos, close - alignasPos);
    return Edit{sharedPos, close, specifier + " __shared__"};
}

// Whether the word at `pos` is called by its plain name: `(` follows, and no `.`, `->` or `::`
// comes before it.
bool isPlainCall(const Source& source, std::size_t pos) {
    if (!source.isCodeChar(source.skipBlanksForward(source.wordEnd(pos)), '(')) return false;
    const std::size_t before = source.skipBlanksAndCommentsBackward(pos);
    if (before == 0) return true;
    return !source.isCodeChar(before - 1, '.') && !(before >= 2 && (source.codeStartsWith(before - 2, "->") ||
                                                                    source.codeStartsWith(before - 2, "::")));
}

// The simulator's replacement for a C library function called in device code: the counted
// `memcpy`, `memmove` and `memset` (also their `__builtin_` forms), the device heap's `malloc`
// and `free`; null for any other word.
const char* deviceLibraryFunction(std::string_view word) {
    if (word.substr(0, 10) == "__builtin_") word.remove_prefix(10);
    if (word == "memcpy") return "::cudasim::detail::device_memcpy";
    if (word == "memmove") return "::cudasim::detail::device_memmove";
    if (word == "memset") return "::cudasim::detail::device_memset";
    if (word == "malloc") return "::cudasim::detail::device_malloc";
    if (word == "free") return "::cudasim::detail::device_free";
    return nullptr;
}

// C library functions that move or read memory, which CUDA device code cannot call (nvcc
// refuses them: only printf, malloc, free, memcpy, memset and the math functions are device
// functions). The simulator would run the C library's code, whose loads and stores no hook
// sees: strncpy, snprintf or qsort in a kernel wrote device memory that nothing counted or
// checked (found in a red-team pass, 2026-11-28). A call of one in device code is an error.
bool hostOnlyLibraryFunction(std::string_view word) {
    static const std::set<std::string_view> names = {
        "strlen", "strnlen", "strcmp", "strncmp", "strchr", "strrchr", "strstr", "strcpy", "strncpy", "stpcpy",
        "stpncpy", "strcat", "strncat", "strdup", "strndup", "strspn", "strcspn", "strpbrk", "strcoll", "strxfrm",
        "strtok", "strtol", "strtoul", "strtoll", "strtoull", "strtof", "strtod", "strtold", "atoi", "atol",
        "atoll", "atof", "memchr", "memrchr", "memcmp", "memmem", "mempcpy", "memccpy", "bcmp", "bcopy", "bzero",
        "sprintf", "snprintf", "vsprintf", "vsnprintf", "sscanf", "vsscanf", "qsort", "bsearch", "wmemcpy",
        "wmemmove", "wmemset", "wcscpy", "wcsncpy"};
    return names.count(word) != 0;
}

// A use of the library function at `pos`, unqualified or qualified by `std::` or `::`, renamed
// to `replacement` (the qualifier with it); nothing for a member or another namespace's
// function. The memory functions are renamed wherever they are named: their address
// (`auto copy = memcpy;`) must be the counted function too, or a call through it would move
// memory the counters never see. malloc and free only where called (a local may be named `free`).
std::optional<Edit> renameLibraryCall(const Source& source, std::size_t pos, const char* replacement) {
    const std::size_t end = source.wordEnd(pos);
    const bool memoryFunction = std::string_view(replacement).find("device_mem") != std::string_view::npos;
    if (!memoryFunction && !source.isCodeChar(source.skipBlanksForward(end), '(')) return std::nullopt;
    std::size_t start = pos;
    const std::size_t before = source.skipBlanksAndCommentsBackward(pos);
    if (before >= 2 && source.codeStartsWith(before - 2, "::")) {
        start = before - 2;
        const std::size_t qualifier = source.skipBlanksAndCommentsBackward(start);
        if (qualifier >= 3 && source.isWordStart(qualifier - 3) && source.wordAt(qualifier - 3) == "std") {
            start = qualifier - 3;
        } else if (qualifier > 0 && source.isCode(qualifier - 1) && isIdentifierChar(source.text()[qualifier - 1])) {
            return std::nullopt;  // another namespace's or a class's function
        }
    } else if (before > 0 && (source.isCodeChar(before - 1, '.') ||
                              (before >= 2 && source.codeStartsWith(before - 2, "->")))) {
        return std::nullopt;  // a member function
    }
    return Edit{start, end, replacement};
}

// Whether the word before `pos` (blanks and comments skipped) is `word`.
bool afterWord(const Source& source, std::size_t pos, std::string_view word) {
    const std::size_t before = source.skipBlanksAndCommentsBackward(pos);
    return before >= word.size() && source.isWordStart(before - word.size()) &&
           source.wordAt(before - word.size()) == word;
}

// `delete p` or `delete[] p` at `pos` as `::cudasim::detail::device_delete(p)` (or
// `device_delete_array`), as two edits: the call's start over `delete` (and `[]`), its `)` after
// the operand, which runs to the first `;`, `,`, `)` or `}` outside brackets and keeps its text
// (and whatever other edits it gets). Nothing for `= delete`.
std::optional<std::pair<Edit, Edit>> rewriteDelete(const Source& source, std::size_t pos) {
    const std::size_t before = source.skipBlanksAndCommentsBackward(pos);
    if (before > 0 && source.isCodeChar(before - 1, '=')) return std::nullopt;
    std::size_t at = source.skipBlanksForward(source.wordEnd(pos));
    bool array = false;
    if (source.isCodeChar(at, '[')) {
        const std::size_t close = source.skipBlanksForward(at + 1);
        if (!source.isCodeChar(close, ']')) return std::nullopt;
        array = true;
        at = source.skipBlanksForward(close + 1);
    }
    std::size_t end = at;
    int depth = 0;
    for (; end < source.size(); ++end) {
        if (!source.isCode(end)) continue;
        const char c = source.text()[end];
        if (c == '(' || c == '[' || c == '{') {
            ++depth;
        } else if (c == ')' || c == ']' || c == '}') {
            if (depth == 0) break;
            --depth;
        } else if ((c == ';' || c == ',') && depth == 0) {
            break;
        }
    }
    if (end == source.size() || end == at) return std::nullopt;
    std::size_t operandEnd = end;  // before blanks, so that `delete p ;` keeps its layout
    while (operandEnd > at && source.isCodeBlankAt(operandEnd - 1)) --operandEnd;
    return std::make_pair(
        Edit{pos, at, array ? "::cudasim::detail::device_delete_array(" : "::cudasim::detail::device_delete("},
        Edit{operandEnd, operandEnd, ")"});
}

// An inline-PTX statement `asm volatile("ptx" : "=r"(d) : "r"(a) : "memory")` at `asmPos` (the
// word asm, __asm or __asm__) in device code, as a call of the simulator's PTX interpreter
// (cudasim/inline_ptx.hpp): `::cudasim::ptx::run("ptx" , ::cudasim::ptx::colon,
// ::cudasim::ptx::operand("=r",(d)) , ...)`; a named operand `[out] "=r"(d)` gets
// `::cudasim::ptx::Name{"out"}` first. Every edit is an insertion or replaces the keyword, a ':'
// or a `[name]`, so the operands keep their text and whatever other edits they get. Nothing for
// what it does not read (asm goto): the compiler then judges the statement.
bool rewriteInlineAssembly(const Source& source, std::size_t asmPos, std::vector<Edit>& edits) {
    std::size_t open = source.skipBlanksForward(source.wordEnd(asmPos));
    while (source.isWordStart(open)) {
        const std::string_view qualifier = source.wordAt(open);
        if (qualifier != "volatile" && qualifier != "__volatile__" && qualifier != "__volatile" &&
            qualifier != "inline")
            return false;
        open = source.skipBlanksForward(source.wordEnd(open));
    }
    if (!source.isCodeChar(open, '(')) return false;
    const std::size_t end = endOfParenthesized(source, open);
    if (end == kNotFound) return false;
    // Line breaks between the keyword and its '(' are kept, so the lines stay the student's.
    std::vector<Edit> made{{asmPos, open + 1, "::cudasim::ptx::run(" + source.lineBreaksIn(asmPos, open)}};
    std::vector<std::size_t> operandCloses;  // where an operand's `)` closes, innermost last
    bool pendingName = false;                 // a [name] was just read: its operand follows
    int depth = 1;
    for (std::size_t i = open + 1; i + 1 < end; ++i) {
        const char c = source.text()[i];
        if (source.isCode(i)) {
            if (c == '(') ++depth;
            if (c == ')') {
                --depth;
                if (!operandCloses.empty() && operandCloses.back() == i) {
                    made.push_back({i + 1, i + 1, ")"});
                    operandCloses.pop_back();
                }
            }
            if (depth == 1 && c == '[') {  // a named operand: [name] "constraint"(value)
                const std::size_t close = source.text().find(']', i);
                const std::size_t literal = close == kNotFound ? kNotFound : source.skipBlanksForward(close + 1);
                if (literal == kNotFound || literal >= end || source.text()[literal] != '"') return false;
                std::string name = source.text().substr(i + 1, close - i - 1);
                name.erase(0, name.find_first_not_of(" \t"));
                name.erase(name.find_last_not_of(" \t") + 1);
                if (name.empty() || !std::all_of(name.begin(), name.end(), [](char ch) {
                        return isIdentifierStart(ch) || isAsciiDigit(ch);
                    }))
                    return false;
                made.push_back({i, literal, "::cudasim::ptx::operand(::cudasim::ptx::Name{\"" + name + "\"}, "});
                pendingName = true;
                i = literal - 1;
                continue;
            }
            if (depth == 1 && c == ':') {
                const std::size_t next = source.skipBlanksForward(i + 1);
                const bool more = !source.isCodeChar(next, ':') && !source.isCodeChar(next, ')');
                made.push_back({i, i + 1, more ? ", ::cudasim::ptx::colon," : ", ::cudasim::ptx::colon"});
            }
            continue;
        }
        if (depth != 1 || c != '"' || source.isComment(i) || (i > 0 && !source.isCode(i - 1) && !source.isComment(i - 1)))
            continue;
        // A string literal at the statement's level: the template, a clobber, or an operand's
        // constraint when a parenthesised expression follows it.
        std::size_t literalEnd = i;
        while (literalEnd < end && !source.isCode(literalEnd) && !source.isComment(literalEnd)) ++literalEnd;
        const std::size_t next = source.skipBlanksForward(literalEnd);
        if (source.isCodeChar(next, '(')) {
            const std::size_t close = endOfParenthesized(source, next);
            if (close == kNotFound) return false;
            // After a [name], the name's edit already opened the call.
            if (!pendingName) made.push_back({i, i, "::cudasim::ptx::operand("});
            made.push_back({literalEnd, literalEnd, ","});
            operandCloses.push_back(close - 1);
        } else if (pendingName) {
            return false;
        }
        pendingName = false;
        i = literalEnd - 1;
    }
    edits.insert(edits.end(), made.begin(), made.end());
    return true;
}

// Whether the `__CUDA_ARCH__` at `pos` is a version test in an #if or #elif line (compared, not
// tested with `defined`).
bool isArchVersionTest(const Source& source, std::size_t pos) {
    std::size_t lineStart = pos;
    while (lineStart > 0 && source.text()[lineStart - 1] != '\n') --lineStart;
    const std::size_t hash = source.skipBlanksForward(lineStart);
    const std::size_t directive = directiveWordAt(source, hash);
    if (directive == kNotFound) return false;
    const std::string_view kind = source.wordAt(directive);
    if (kind != "if" && kind != "elif") return false;
    std::size_t before = pos;
    auto skipBlanksBack = [&] {
        while (before > directive && (source.text()[before - 1] == ' ' || source.text()[before - 1] == '\t')) --before;
    };
    skipBlanksBack();
    if (before > directive && source.text()[before - 1] == '(') {
        --before;
        skipBlanksBack();
    }
    if (before < 7) return true;  // no room for `defined` before it
    const std::size_t defined = before - 7;
    return !(source.text().compare(defined, 7, "defined") == 0 && source.isWordStart(defined));
}

// The edits that turn `source` into C++ for the simulator (everything but the #includes).
// ---------------------------------------------------------------------------------------------
// Loop fission
//
// A kernel with barriers runs as one coroutine per thread (above): correct for any kernel, but
// every thread suspends and resumes at every barrier. Where the barriers sit so that all threads
// of a block reach each of them together, the same kernel can run as plain loops: the code
// between two barriers becomes one loop over the block's threads, as compilers that turn CUDA
// into CPU code do (MCUDA, COX, Polygeist). The rewrite then wraps the body:
//
//   __global__ void k(P p) { if (const std::size_t cudasim_fission = begin_fissioned_block();
//                                cudasim_fission == 0) { ORIGINAL BODY (a coroutine) }
//                            else { FISSIONED BODY } }
//
// The fissioned body runs once per block, called as the block's first thread; the simulator
// gives it every thread of the block (cudasim/device_functions.hpp, FissionedBlock). It is:
//   * the body's namespace-like declarations first: `__shared__` arrays, `extern __shared__`
//     (as rewritten above) and `constexpr` locals of its top level;
//   * per stretch of statements between barriers, `CUDASIM_FOR_EACH_THREAD(b) { ... }` around
//     that stretch's own text: loops over z, y and x that set threadIdx for each thread in
//     thread order, as the coroutine version runs them;
//   * per barrier, `b.barrier()`, which counts the block's arrivals as the coroutine version's;
//   * a loop whose body has barriers stays a loop around its stretches, run once by the block:
//     only where every thread would make the same trips (see isUniformExpression);
//   * a local declared at the top level of a stretch and named in a later one lives in a
//     per-thread array: the stretch that declares it keeps its value there at the end
//     (fission_keep), and every later stretch that names it copies the thread's value into a
//     local of its own at its start and back at its end (see emitList).
// Every stretch of the original text keeps its line: it is preceded by a `#line N` directive,
// and the wrapper ends with one for the line of the body's closing brace, so that diagnostics,
// __builtin_LINE() and the debug information point at the student's lines.
//
// What cannot be proved sound keeps the coroutine version only, as before: a barrier under
// an `if`, in a `while`, in a loop whose bounds may differ between threads or inside
// an expression; `return`, `goto`, labels, or a `break`/`continue` that would leave a stretch;
// warp operations, cooperative groups, wmma or anything else where threads wait for each other,
// also through a function or macro of the project that contains one; a parameter written to,
// whose address is taken or that is passed to a function (each thread has its own copy of the
// parameters, and a fissioned block has one for all); a local that lives across a barrier
// declared with `auto`, a reference, `static`, or twice; preprocessor conditionals in the body.
// ---------------------------------------------------------------------------------------------

struct Token {
    enum Kind : unsigned char { Word, Number, Literal, Punct };
    Kind kind;
    std::size_t begin, end;
    std::string_view text;
};

bool isWordToken(const Token& token, std::string_view word) { return token.kind == Token::Word && token.text == word; }
bool isPunct(const Token& token, std::string_view punct) { return token.kind == Token::Punct && token.text == punct; }

// The tokens of [begin, end) of `source`, or nullopt when a directive other than #pragma lies
// in the range (the fissioned text could not keep it), unless `skipDirectives`.
std::optional<std::vector<Token>> tokenize(const Source& source, std::size_t begin, std::size_t end,
                                           bool skipDirectives = false) {
    static constexpr std::string_view kOperators[] = {
        "<<=", ">>=", "->*", "...", "::", "->", "++", "--", "<<", ">>", "<=", ">=", "==", "!=",
        "&&",  "||",  "+=",  "-=",  "*=", "/=", "%=", "&=", "|=", "^=", ".*"};
    std::vector<Token> tokens;
    const std::string& text = source.text();
    std::size_t i = begin;
    while (i < end) {
        if (source.isDirective(i)) {
            if (source.isCodeChar(i, '#')) {
                const std::size_t word = directiveWordAt(source, i);
                if (!skipDirectives && (word == kNotFound || source.wordAt(word) != "pragma")) return std::nullopt;
                i = endOfDirective(source, i);
                continue;
            }
            ++i;
            continue;
        }
        if (source.isComment(i) || source.isCodeBlankAt(i)) {
            ++i;
            continue;
        }
        if (!source.isCode(i)) {  // a string or character literal, with its prefix
            std::size_t j = i;
            while (j < end && !source.isCode(j) && !source.isComment(j)) ++j;
            tokens.push_back({Token::Literal, i, j, std::string_view(text.data() + i, j - i)});
            i = j;
            continue;
        }
        const char c = text[i];
        std::size_t j = i + 1;
        Token::Kind kind = Token::Punct;
        if (source.isWordStart(i)) {
            j = source.wordEnd(i);
            kind = Token::Word;
            if (j < end && !source.isCode(j) && !source.isComment(j)) {  // u8"...", L'x', R"(...)"
                while (j < end && !source.isCode(j) && !source.isComment(j)) ++j;
                kind = Token::Literal;
            }
        } else if (isAsciiDigit(c) || (c == '.' && i + 1 < end && isAsciiDigit(text[i + 1]))) {
            j = endOfNumber(text, i);
            kind = Token::Number;
        } else {
            for (const std::string_view op : kOperators) {
                if (source.codeStartsWith(i, op)) {
                    j = i + op.size();
                    break;
                }
            }
        }
        tokens.push_back({kind, i, j, std::string_view(text.data() + i, j - i)});
        i = j;
    }
    return tokens;
}

// A statement of a kernel body, as token indices [first, last).
struct Statement {
    enum Kind : unsigned char { Simple, Block, For, Loop, If, Switch, Barrier } kind = Simple;
    std::size_t first = 0, last = 0;
    std::size_t headerOpen = 0, headerClose = 0;  // For: the '(' and ')' of the header
    std::vector<Statement> children;             // Block: its statements; others: sub-statements
};

class StatementParser {
 public:
    explicit StatementParser(const std::vector<Token>& tokens) : tokens_(tokens), match_(tokens.size(), kNotFound) {
        std::vector<std::size_t> open;
        for (std::size_t i = 0; i < tokens.size(); ++i) {
            const std::string_view t = tokens[i].kind == Token::Punct ? tokens[i].text : std::string_view();
            if (t == "(" || t == "[" || t == "{") open.push_back(i);
            if (t == ")" || t == "]" || t == "}") {
                if (open.empty()) return;
                const char expected = t == ")" ? '(' : t == "]" ? '[' : '{';
                if (tokens[open.back()].text[0] != expected) return;
                match_[open.back()] = i;
                match_[i] = open.back();
                open.pop_back();
            }
        }
        balanced_ = open.empty();
    }

    bool balanced() const { return balanced_; }
    std::size_t match(std::size_t i) const { return match_[i]; }

    // The statements of [first, last); false if they do not parse.
    bool parseList(std::size_t first, std::size_t last, std::vector<Statement>& out) const {
        std::size_t i = first;
        while (i < last) {
            Statement s;
            i = parse(i, last, s);
            if (i == kNotFound) return false;
            out.push_back(std::move(s));
        }
        return true;
    }

 private:
    // Parses the statement starting at `i` (before `last`); returns the index after it.
    std::size_t parse(std::size_t i, std::size_t last, Statement& s) const {
        s.first = i;
        const Token& t = tokens_[i];
        auto parenthesizedAfter = [&](std::size_t k) {  // index of ')' of the '(' at k, or npos
            return k < last && isPunct(tokens_[k], "(") ? match_[k] : kNotFound;
        };
        auto sub = [&](std::size_t k) -> std::size_t {
            if (k >= last) return kNotFound;
            Statement child;
            const std::size_t next = parse(k, last, child);
            if (next != kNotFound) s.children.push_back(std::move(child));
            return next;
        };
        std::size_t next = kNotFound;
        if (isPunct(t, "{")) {
            s.kind = Statement::Block;
            const std::size_t close = match_[i];
            if (close == kNotFound || close >= last || !parseList(i + 1, close, s.children)) return kNotFound;
            next = close + 1;
        } else if (isWordToken(t, "for") || isWordToken(t, "while") || isWordToken(t, "switch")) {
            s.kind = isWordToken(t, "for") ? Statement::For : isWordToken(t, "while") ? Statement::Loop : Statement::Switch;
            const std::size_t close = parenthesizedAfter(i + 1);
            if (close == kNotFound) return kNotFound;
            s.headerOpen = i + 1;
            s.headerClose = close;
            next = sub(close + 1);
        } else if (isWordToken(t, "do")) {
            s.kind = Statement::Loop;
            const std::size_t afterBody = sub(i + 1);
            if (afterBody == kNotFound || afterBody >= last || !isWordToken(tokens_[afterBody], "while")) return kNotFound;
            const std::size_t close = parenthesizedAfter(afterBody + 1);
            if (close == kNotFound || close + 1 >= last || !isPunct(tokens_[close + 1], ";")) return kNotFound;
            next = close + 2;
        } else if (isWordToken(t, "if")) {
            s.kind = Statement::If;
            std::size_t k = i + 1;
            if (k < last && isWordToken(tokens_[k], "constexpr")) ++k;
            const std::size_t close = parenthesizedAfter(k);
            if (close == kNotFound) return kNotFound;
            next = sub(close + 1);
            if (next != kNotFound && next < last && isWordToken(tokens_[next], "else")) next = sub(next + 1);
        } else {
            // Anything else ends at the first ';' outside brackets.
            std::size_t k = i;
            while (k < last && !isPunct(tokens_[k], ";")) {
                const std::string_view p = tokens_[k].kind == Token::Punct ? tokens_[k].text : std::string_view();
                if (p == "(" || p == "[" || p == "{") k = match_[k];
                if (k == kNotFound) return kNotFound;
                ++k;
            }
            if (k >= last) return kNotFound;
            next = k + 1;
            const bool barrier = next - i == 4 && isWordToken(tokens_[i], "__syncthreads") && isPunct(tokens_[i + 1], "(") &&
                                 isPunct(tokens_[i + 2], ")");
            s.kind = barrier ? Statement::Barrier : Statement::Simple;
        }
        s.last = next;
        return next;
    }

    const std::vector<Token>& tokens_;
    std::vector<std::size_t> match_;
    bool balanced_ = false;
};

// What the whole project tells about names a kernel uses (see projectFacts).
struct ProjectFacts {
    NameSet waiting;    // functions and macros in which threads may wait for each other
    NameSet constants;  // namespace-scope const/constexpr variables and macros of a number
    NameSet deviceVariables;  // __device__, __constant__, __managed__ variables
    NameSet macros;     // every macro #defined in the project
};

// Words with which a thread waits for, or depends on, other threads of its block or warp
// (other than a plain __syncthreads statement), or leaves its code early.
bool isWaitingWord(std::string_view w) {
    static const NameSet kWords = {
        "__syncthreads", "__syncthreads_count", "__syncthreads_and", "__syncthreads_or", "__syncwarp",
        "__shfl_sync", "__shfl_up_sync", "__shfl_down_sync", "__shfl_xor_sync", "__shfl", "__shfl_up",
        "__shfl_down", "__shfl_xor", "__ballot_sync", "__ballot", "__all_sync", "__any_sync", "__uni_sync",
        "__all", "__any", "__activemask", "__match_any_sync", "__match_all_sync", "__reduce_add_sync",
        "__reduce_min_sync", "__reduce_max_sync", "__reduce_and_sync", "__reduce_or_sync", "__reduce_xor_sync",
        "cooperative_groups", "cg", "this_thread_block", "this_grid", "tiled_partition", "coalesced_threads",
        "nvcuda", "wmma", "mma_sync", "load_matrix_sync", "store_matrix_sync", "fill_fragment", "cuda", "cub",
        "thrust", "__nanosleep", "clock", "clock64", "co_await", "co_return", "co_yield", "asm", "setjmp",
        "longjmp", "throw", "try"};
    return kWords.count(w) != 0;
}

ProjectFacts projectFacts(const std::vector<const Source*>& sources) {
    ProjectFacts facts;
    // Function definitions and macros, with the words of their bodies.
    std::vector<std::pair<std::string, NameSet>> bodies;
    for (const Source* source : sources) {
        // Directives are skipped here (macros are read below).
        const std::vector<Token> tokens = *tokenize(*source, 0, source->size(), /*skipDirectives=*/true);
        StatementParser brackets(tokens);
        for (std::size_t i = 0; i < tokens.size(); ++i) {
            const Token& t = tokens[i];
            if (isPunct(t, "{")) {
                // A function body: ')' (after qualifiers) before it, at any depth outside one.
                std::size_t k = i;
                while (k > 0 && tokens[k - 1].kind == Token::Word &&
                       (tokens[k - 1].text == "const" || tokens[k - 1].text == "noexcept" ||
                        tokens[k - 1].text == "override" || tokens[k - 1].text == "final" ||
                        tokens[k - 1].text == "mutable" || tokens[k - 1].text == "volatile"))
                    --k;
                const std::size_t close = i + 1 < tokens.size() ? brackets.match(i) : kNotFound;
                if (k > 0 && isPunct(tokens[k - 1], ")") && close != kNotFound) {
                    const std::size_t open = brackets.match(k - 1);
                    std::string name;
                    // (Not a member initializer, `S(int v) : v_(v) {`.)
                    const bool initializer = open != kNotFound && open > 1 &&
                                             (isPunct(tokens[open - 2], ",") || isPunct(tokens[open - 2], ":"));
                    if (open != kNotFound && open > 0 && !initializer) {
                        if (tokens[open - 1].kind == Token::Word) name = std::string(tokens[open - 1].text);
                        if (isPunct(tokens[open - 1], ")")) name = "operator()";
                    }
                    NameSet words;
                    for (std::size_t w = i + 1; w < close; ++w)
                        if (tokens[w].kind == Token::Word) words.emplace(tokens[w].text);
                    if (!name.empty()) bodies.emplace_back(std::move(name), std::move(words));
                    i = close;  // the body's nested braces are its own
                    continue;
                }
            } else if (t.kind == Token::Word && (t.text == "const" || t.text == "constexpr")) {
                // `const int kTile = 16;` at namespace or class scope: the name before '=' or '{'.
                std::size_t k = i + 1;
                while (k + 1 < tokens.size() && tokens[k].kind == Token::Word) ++k;
                if (k < tokens.size() && k > i + 1 && (isPunct(tokens[k], "=") || isPunct(tokens[k], "{")))
                    facts.constants.emplace(tokens[k - 1].text);
            } else if (t.kind == Token::Word && (t.text == "__device__" || t.text == "__constant__" || t.text == "__managed__")) {
                // A variable: '=', ';', '[' or '{' before any '('.
                std::size_t k = i + 1;
                while (k < tokens.size() && tokens[k].kind != Token::Punct) ++k;
                if (k < tokens.size() && k > i + 1 && !isPunct(tokens[k], "(") && !isPunct(tokens[k], "<") &&
                    tokens[k - 1].kind == Token::Word)
                    facts.deviceVariables.emplace(tokens[k - 1].text);
            }
        }
        for (const MacroDefinition& macro : macroDefinitions(*source)) {
            NameSet words;
            bool numeric = !macro.functionLike;
            for (std::size_t i = macro.body; i < macro.end; ++i) {
                if (source->isWordStart(i)) {
                    words.emplace(source->wordAt(i));
                    numeric = false;
                    i = source->wordEnd(i) - 1;
                } else if (isAsciiDigit(source->text()[i])) {
                    i = endOfNumber(source->text(), i) - 1;
                } else if (!source->isCode(i) && !source->isComment(i)) {
                    numeric = false;
                } else if (source->isCode(i) && std::string_view("+-*/%()<> \t\r\\\n").find(source->text()[i]) == std::string_view::npos) {
                    numeric = false;
                }
            }
            const std::string name(source->wordAt(macro.name));
            facts.macros.insert(name);
            if (numeric) facts.constants.insert(name);
            for (const char* leaves : {"return", "break", "continue", "goto"})
                if (words.count(leaves) != 0) facts.waiting.insert(name);
            bodies.emplace_back(name, std::move(words));
        }
    }
    for (bool grew = true; grew;) {
        grew = false;
        for (const auto& [name, words] : bodies) {
            if (facts.waiting.count(name) != 0) continue;
            const bool waits = std::any_of(words.begin(), words.end(), [&facts](const std::string& w) {
                return isWaitingWord(w) || facts.waiting.count(w) != 0;
            });
            if (waits) grew = facts.waiting.insert(name).second;
        }
    }
    return facts;
}

// The fission of one kernel (see the section comment).
class KernelFission {
 public:
    KernelFission(const Source& source, const std::vector<Edit>& edits, const ProjectFacts& facts)
        : source_(source), edits_(edits), facts_(facts) {}

    // The two insertions that give the kernel whose body is [bodyOpen, bodyClose] its fissioned
    // version, or nullopt when it is not sound (or not a kernel with barriers).
    std::optional<std::pair<Edit, Edit>> run(std::size_t globalPos, std::size_t bodyOpen, std::size_t bodyClose) {
        std::optional<std::vector<Token>> body = tokenize(source_, bodyOpen + 1, bodyClose);
        std::optional<std::vector<Token>> head =
            tokenize(source_, declarationStart(source_, globalPos), bodyOpen, /*skipDirectives=*/true);
        if (!body || !head) return refused("a preprocessor directive other than #pragma");
        tokens_ = std::move(*body);
        if (!readSignature(*head)) return refused("its parameter list could not be read");
        StatementParser parser(tokens_);
        if (!parser.balanced()) return refused("unbalanced brackets");
        parser_ = &parser;
        std::vector<Statement> statements;
        if (!parser.parseList(0, tokens_.size(), statements)) return refused("a statement could not be read");
        if (!bodyIsFissionable()) return std::nullopt;

        List top;
        if (!analyseList(statements, top, /*topLevel=*/true)) return std::nullopt;
        if (!hasBarrier_) return refused("no __syncthreads() statement");

        std::string fissioned = "} else { ::cudasim::detail::FissionedBlock cudasim_block(cudasim_fission);";
        for (const Statement* s : hoisted_) fissioned += chunk(s->first, s->last);
        for (const SlotVariable& v : slots_) {
            fissioned += "\nauto* const cudasim_slot_" + v.name + " = cudasim_block.slots<" + v.type + ">();";
        }
        std::vector<const SlotVariable*> visible;
        emitList(top, visible, fissioned);
        fissioned += "\n#line " + std::to_string(source_.lineOf(bodyClose)) + "\n}";
        const std::string opening =
            " if (const std::size_t cudasim_fission = ::cudasim::detail::begin_fissioned_block(); cudasim_fission == 0) {";
        return std::make_pair(Edit{bodyOpen + 1, bodyOpen + 1, opening}, Edit{bodyClose, bodyClose, fissioned});
    }

    // Why the kernel is not fissioned (the first reason found).
    const std::string& why() const { return why_; }

 private:
    std::nullopt_t refused(const std::string& reason) {
        if (why_.empty()) why_ = reason;
        return std::nullopt;
    }
    bool refuse(const std::string& reason) {
        refused(reason);
        return false;
    }

    struct SlotVariable {
        std::string name;
        std::string type;  // of one thread's value
    };
    struct Item;
    using List = std::vector<Item>;
    struct Item {
        enum Kind : unsigned char { Stretch, Barrier, UniformLoop } kind;
        std::vector<const Statement*> statements;  // Stretch: its statements (hoisted ones left out)
        std::vector<std::size_t> declaredSlots;     // Stretch: indices into slots_ it keeps
        std::vector<std::tuple<std::string, std::string, bool>> declares;  // Stretch: name, type, storable
        const Statement* statement = nullptr;        // Barrier, UniformLoop
        List body;                                   // UniformLoop
    };
    struct Parameter {
        std::string name;
        bool pointer;
    };

    // The kernel's parameters and template parameters, from the tokens before its body.
    bool readSignature(const std::vector<Token>& head) {
        if (head.empty() || !isPunct(head.back(), ")")) return false;
        StatementParser brackets(head);
        if (!brackets.balanced()) return false;
        const std::size_t close = head.size() - 1, open = brackets.match(close);
        std::size_t start = open + 1;
        for (std::size_t i = open + 1; i <= close; ++i) {
            const std::string_view p = head[i].kind == Token::Punct ? head[i].text : std::string_view();
            if ((p == "(" || p == "[" || p == "{") && i != close) {
                i = brackets.match(i);
                continue;
            }
            if (p != "," && i != close) continue;
            // One parameter in [start, i): its name is the last word before any default value.
            std::size_t end = start;
            bool pointer = false;
            while (end < i && !isPunct(head[end], "=")) {
                pointer = pointer || isPunct(head[end], "*") || isPunct(head[end], "[");
                ++end;
            }
            std::size_t nameAt = end;
            while (nameAt > start && isPunct(head[nameAt - 1], "]")) nameAt = brackets.match(nameAt - 1);
            if (nameAt > start + 1 && head[nameAt - 1].kind == Token::Word)
                parameters_.push_back({std::string(head[nameAt - 1].text), pointer});
            start = i + 1;
        }
        // template <class T, int N>: the words before ',', '>' or '='.
        if (isWordToken(head.front(), "template")) {
            for (std::size_t i = 1; i + 1 < open; ++i) {
                if (head[i].kind == Token::Word &&
                    (isPunct(head[i + 1], ",") || isPunct(head[i + 1], ">") || isPunct(head[i + 1], "=")))
                    constants_.emplace(head[i].text);
                if (isPunct(head[i + 1], ">") && head[i].kind != Token::Punct) break;
            }
        }
        return true;
    }

    const Parameter* parameterNamed(std::string_view name) const {
        for (const Parameter& p : parameters_)
            if (p.name == name) return &p;
        return nullptr;
    }

    bool afterMemberAccess(std::size_t i) const {
        return i > 0 && (isPunct(tokens_[i - 1], ".") || isPunct(tokens_[i - 1], "->") || isPunct(tokens_[i - 1], "::"));
    }
    // Whether token i ends an operand (so that a `*` or `&` after it is binary).
    bool isOperand(std::size_t i) const {
        const Token& t = tokens_[i];
        if (t.kind == Token::Word)
            return t.text != "else" && t.text != "return" && t.text != "do" && t.text != "case";
        if (isPunct(t, ")")) {  // not the condition of `if (c) *p = v;`
            const std::size_t open = parser_ != nullptr ? parser_->match(i) : kNotFound;
            if (open != kNotFound && open > 0 && tokens_[open - 1].kind == Token::Word) {
                const std::string_view w = tokens_[open - 1].text;
                return w != "if" && w != "while" && w != "for" && w != "switch";
            }
            return true;
        }
        return t.kind != Token::Punct || t.text == "]";
    }

    // What rules the whole body out: words with which threads wait for each other (except the
    // plain __syncthreads statements, checked where they stand), leaving statements, calls
    // through parameters, and parameters that may be written.
    bool bodyIsFissionable() {
        for (std::size_t i = 0; i < tokens_.size(); ++i) {
            const Token& t = tokens_[i];
            if (t.kind != Token::Word) continue;
            if (t.text == "__syncthreads") continue;  // analyseList accepts those that are statements
            if (isWaitingWord(t.text)) return refuse("`" + std::string(t.text) + "`: threads may wait for each other");
            if (facts_.waiting.count(t.text) != 0)
                return refuse("`" + std::string(t.text) + "` may wait for other threads or leave the kernel");
            if (t.text == "return" || t.text == "goto" || t.text == "struct" || t.text == "class" ||
                t.text == "union" || t.text == "using" || t.text == "typedef" || t.text == "static_assert" ||
                t.text.substr(0, 8) == "cudasim_")
                return refuse("`" + std::string(t.text) + "`");
            if (i + 1 < tokens_.size() && isPunct(tokens_[i + 1], ":") && !afterMemberAccess(i) && t.text != "default" &&
                (i == 0 || isPunct(tokens_[i - 1], ";") || isPunct(tokens_[i - 1], "{") || isPunct(tokens_[i - 1], "}")))
                return refuse("a label");
            if (afterMemberAccess(i)) continue;
            if (const Parameter* p = parameterNamed(t.text)) {
                if (!isReadOnlyUse(i, p->pointer))
                    return refuse("parameter `" + p->name + "` may be written (or passed to a function)");
            }
        }
        return true;
    }

    // Whether the occurrence of a parameter or uniform variable at `i` only reads it.
    bool isReadOnlyUse(std::size_t i, bool pointer) const {
        if (i > 0) {
            const Token& before = tokens_[i - 1];
            const bool unary = i < 2 || !isOperand(i - 2);
            if (isPunct(before, "++") || isPunct(before, "--")) return false;
            if (isPunct(before, "&") && unary) return false;  // address taken
            if (isPunct(before, "*") && unary && pointer) return true;  // `*p = v` writes what p points to
        }
        if (i + 1 >= tokens_.size()) return false;
        if (bindsReference(i)) return false;
        const Token& after = tokens_[i + 1];
        if (after.kind != Token::Punct) return false;
        const std::string_view a = after.text;
        if (a == "[") return pointer;
        static const NameSet kReading = {"+", "-", "*", "/", "%", "<", ">", "<=", ">=", "==", "!=", "&&", "||",
                                         "&", "|", "^", "?", ":", ";", "]", "<<", ">>"};
        if (kReading.count(a) != 0) return true;
        if (a == ")" || a == ",") {
            // Inside parentheses: fine unless they are a call's (a reference parameter could
            // write it), except the course's pure helpers and casts.
            int depth = 0;
            for (std::size_t k = i; k-- > 0;) {
                if (isPunct(tokens_[k], ")") || isPunct(tokens_[k], "]") || isPunct(tokens_[k], "}")) ++depth;
                if (isPunct(tokens_[k], "(") || isPunct(tokens_[k], "[") || isPunct(tokens_[k], "{")) {
                    if (depth-- > 0) continue;
                    if (!isPunct(tokens_[k], "(")) return a == "]";
                    if (k == 0) return true;
                    const Token& callee = tokens_[k - 1];
                    static const NameSet kPure = {"if", "while", "for", "switch", "return", "sizeof", "min", "max",
                                                  "fminf", "fmaxf", "fmin", "fmax", "abs", "fabsf", "fabs", "int",
                                                  "unsigned", "float", "double", "long", "short", "char", "bool",
                                                  "size_t", "printf", "__ldg", "static_cast", "reinterpret_cast"};
                    if (callee.kind == Token::Word) return kPure.count(callee.text) != 0;
                    if (isPunct(callee, ">")) return true;  // static_cast<T>(x)
                    return callee.kind == Token::Punct && !isPunct(callee, ")") && !isPunct(callee, "]");
                }
            }
            return false;
        }
        return false;
    }

    // Whether the occurrence at `i` initializes a reference (`int& r = n;`), through which it
    // could be written.
    bool bindsReference(std::size_t i) const {
        return i >= 3 && isPunct(tokens_[i - 1], "=") && tokens_[i - 2].kind == Token::Word &&
               (isPunct(tokens_[i - 3], "&") || isPunct(tokens_[i - 3], "&&"));
    }

    // Declarations at a stretch's top level: the names they declare, with the type of one
    // thread's value where it can be written, and whether the statement goes first in the
    // fissioned body.
    struct Declaration {
        bool hoisted = false;      // __shared__, extern __shared__, constexpr at the body's top level
        bool constant = false;     // constexpr: the same in every thread, and never in memory
        bool storable = true;      // every declarator's type can be written (no auto, &, static)
        std::vector<std::pair<std::string, std::string>> names;  // name, type
    };
    static bool isSpecifier(std::string_view w) {
        return w == "const" || w == "volatile" || w == "constexpr" || w == "static" || w == "extern" ||
               w == "__shared__" || w == "register" || w == "unsigned" || w == "signed" || w == "long" ||
               w == "short" || w == "__restrict__" || w == "inline" || w == "typename" || w == "alignas" ||
               w == "__align__";
    }
    std::optional<Declaration> declarationIn(const Statement& s) const {
        std::size_t i = s.first;
        const std::size_t end = s.last - 1;  // the ';'
        Declaration d;
        bool sawType = false, shared = false, isConstexpr = false, isStatic = false, isExtern = false;
        std::string base;
        // Specifiers and the type name: words, '::' and template argument lists.
        while (i < end) {
            const Token& t = tokens_[i];
            if (t.kind == Token::Word && (t.text == "alignas" || t.text == "__align__") && i + 1 < end &&
                isPunct(tokens_[i + 1], "(")) {
                i = parser_->match(i + 1) + 1;
                continue;
            }
            if (t.kind == Token::Word && isSpecifier(t.text)) {
                shared = shared || t.text == "__shared__";
                isConstexpr = isConstexpr || t.text == "constexpr";
                isStatic = isStatic || t.text == "static";
                isExtern = isExtern || t.text == "extern";
                if (t.text != "static" && t.text != "extern" && t.text != "__shared__" && t.text != "register" &&
                    t.text != "constexpr" && t.text != "inline")
                    base += std::string(t.text) + " ";
                ++i;
                continue;
            }
            if (sawType) break;
            if (t.kind != Token::Word) return std::nullopt;
            const bool integerSpecifiers = base.find("unsigned") != std::string::npos || base.find("signed") != std::string::npos ||
                                           base.find("long") != std::string::npos || base.find("short") != std::string::npos;
            if (integerSpecifiers && i + 1 <= end &&
                (isPunct(tokens_[i + 1], "=") || isPunct(tokens_[i + 1], ",") || isPunct(tokens_[i + 1], "[") ||
                 isPunct(tokens_[i + 1], "{") || isPunct(tokens_[i + 1], ";"))) {
                sawType = true;  // `unsigned x = 0;`: the word is the declarator
                break;
            }
            static const NameSet kStatementWords = {"return", "break", "continue", "goto", "if", "else", "do",
                                                    "while", "for", "switch", "case", "default", "delete",
                                                    "new", "throw", "sizeof", "this", "true", "false", "nullptr"};
            if (kStatementWords.count(t.text) != 0) return std::nullopt;
            base += std::string(t.text);
            sawType = true;
            ++i;
            while (i + 1 < end && isPunct(tokens_[i], "::") && tokens_[i + 1].kind == Token::Word) {
                base += "::" + std::string(tokens_[i + 1].text);
                i += 2;
            }
            if (i < end && isPunct(tokens_[i], "<")) {  // template arguments
                int depth = 0;
                const std::size_t from = i;
                for (; i < end; ++i) {
                    if (isPunct(tokens_[i], "<")) ++depth;
                    if (isPunct(tokens_[i], ">")) --depth;
                    if (isPunct(tokens_[i], ">>")) depth -= 2;
                    if (isPunct(tokens_[i], "(") || isPunct(tokens_[i], "[")) i = parser_->match(i);
                    if (depth <= 0) break;
                }
                if (depth != 0 || i >= end) return std::nullopt;
                ++i;
                base += textOf(from, i);
            }
            base += " ";
        }
        if (!sawType) return std::nullopt;
        d.hoisted = shared || isExtern || isConstexpr;
        d.constant = isConstexpr && !shared && !isExtern;
        if (isStatic && !shared) d.storable = false;
        // Declarators, separated by ',' outside brackets.
        while (i < end) {
            std::string pointerPart;
            while (i < end && (isPunct(tokens_[i], "*") || isPunct(tokens_[i], "&") || isPunct(tokens_[i], "&&") ||
                               isWordToken(tokens_[i], "const") || isWordToken(tokens_[i], "volatile") ||
                               isWordToken(tokens_[i], "__restrict__"))) {
                if (tokens_[i].kind == Token::Punct && tokens_[i].text != "*") d.storable = false;  // a reference
                pointerPart += std::string(tokens_[i].text) + " ";
                ++i;
            }
            if (i >= end || tokens_[i].kind != Token::Word) return std::nullopt;
            const std::string name(tokens_[i].text);
            ++i;
            if (i < end && !isPunct(tokens_[i], "=") && !isPunct(tokens_[i], ",") && !isPunct(tokens_[i], "[") &&
                !isPunct(tokens_[i], "{") && !isPunct(tokens_[i], "("))
                return std::nullopt;  // not a declaration (e.g. `a b c;`)
            std::string dims;
            while (i < end && isPunct(tokens_[i], "[")) {
                const std::size_t close = parser_->match(i);
                dims += textOf(i, close + 1);
                i = close + 1;
            }
            // The initializer, to the next ',' outside brackets.
            while (i < end && !isPunct(tokens_[i], ",")) {
                const std::string_view p = tokens_[i].kind == Token::Punct ? tokens_[i].text : std::string_view();
                if (p == "(" || p == "[" || p == "{") i = parser_->match(i);
                ++i;
            }
            if (i < end) ++i;  // the ','
            if (base.find("auto") != std::string::npos || base.find("decltype") != std::string::npos) d.storable = false;
            d.names.emplace_back(name, "std::remove_cv_t<" + base + pointerPart + ">" + dims);
        }
        return d;
    }

    // Whether a statement that declarationIn could not read may still declare a name: it starts
    // with two words, or a word and `*`, `&`, `::` or `<` (a type and a declarator).
    bool looksLikeDeclaration(const Statement& s) const {
        if (s.last - s.first < 3 || tokens_[s.first].kind != Token::Word) return false;
        static const NameSet kTypeWords = {"float", "double", "int", "char", "bool", "void", "auto", "size_t",
                                           "half", "__half", "float2", "float4", "int2", "int4", "dim3", "uint3"};
        if (isSpecifier(tokens_[s.first].text) || kTypeWords.count(tokens_[s.first].text) != 0) return true;
        const Token& second = tokens_[s.first + 1];
        return second.kind == Token::Word || isPunct(second, "*") || isPunct(second, "&") || isPunct(second, "&&") ||
               isPunct(second, "::") || isPunct(second, "<");
    }

    std::string textOf(std::size_t first, std::size_t last) const {
        std::string text;
        for (std::size_t i = first; i < last; ++i) {
            if (i > first) text += ' ';
            text += tokens_[i].text;
        }
        return text;
    }

    // Whether the words of `expression` [first, last) are the same for every thread of a block.
    bool isUniformExpression(std::size_t first, std::size_t last) const {
        static const NameSet kAllowedWords = {"static_cast", "int", "unsigned", "long", "short", "char", "float",
                                              "double", "bool", "signed", "size_t", "sizeof", "true", "false",
                                              "min", "max", "warpSize"};
        static const NameSet kOperators = {"+", "-", "*", "/", "%", "<", ">", "<=", ">=", "==", "!=", "&&", "||",
                                           "!", "~", "?", ":", "(", ")", "<<", ">>", "&", "|", "^"};
        for (std::size_t i = first; i < last; ++i) {
            const Token& t = tokens_[i];
            if (t.kind == Token::Number) continue;
            if (t.kind == Token::Literal) return false;
            if (t.kind == Token::Punct) {
                if (kOperators.count(t.text) == 0) return false;
                const bool unary = i == first || !isOperand(i - 1);
                if (unary && (t.text == "*" || t.text == "&")) return false;  // a load or an address
                continue;
            }
            if (t.text == "blockIdx" || t.text == "blockDim" || t.text == "gridDim") {
                if (i + 2 >= last || !isPunct(tokens_[i + 1], ".")) return false;
                const std::string_view c = tokens_[i + 2].text;
                if (c != "x" && c != "y" && c != "z") return false;
                i += 2;
                continue;
            }
            if (kAllowedWords.count(t.text) != 0) continue;
            const std::string name(t.text);
            if (uniform_.count(name) != 0) continue;
            if (parameterNamed(name) != nullptr) continue;  // every use reads it (bodyIsFissionable)
            if (declared_.count(name) != 0) return false;   // a thread's own local
            if (constants_.count(name) != 0) continue;      // template parameters
            if (facts_.constants.count(name) != 0 && facts_.deviceVariables.count(name) == 0) continue;
            return false;
        }
        return true;
    }

    // Whether `for (header)` at statement `s` runs the same trips in every thread; records its
    // variable as uniform.
    bool isUniformFor(const Statement& s) {
        // for (init; condition; increment) with init `T v = e` or empty.
        std::size_t semi1 = kNotFound, semi2 = kNotFound;
        for (std::size_t i = s.headerOpen + 1; i < s.headerClose; ++i) {
            if (isPunct(tokens_[i], "(") || isPunct(tokens_[i], "[") || isPunct(tokens_[i], "{")) {
                i = parser_->match(i);
                continue;
            }
            if (isPunct(tokens_[i], ";")) (semi1 == kNotFound ? semi1 : semi2) = i;
        }
        if (semi1 == kNotFound || semi2 == kNotFound) return false;
        std::string variable;
        if (semi1 > s.headerOpen + 1) {
            std::size_t i = s.headerOpen + 1;
            while (i < semi1 && tokens_[i].kind == Token::Word && i + 1 < semi1 && tokens_[i + 1].kind == Token::Word) ++i;
            if (i + 1 >= semi1 || tokens_[i].kind != Token::Word || !isPunct(tokens_[i + 1], "=")) return false;
            if (i == s.headerOpen + 1) return false;  // an assignment, not a declaration
            variable = std::string(tokens_[i].text);
            if (!isUniformExpression(i + 2, semi1)) return false;
        }
        if (variable.empty()) return false;
        uniform_.insert(variable);
        if (!isUniformExpression(semi1 + 1, semi2)) return false;
        // The increment: ++v, v++, --v, v--, or v op= uniform.
        const std::size_t a = semi2 + 1, b = s.headerClose;
        auto isVariable = [&](std::size_t i) { return isWordToken(tokens_[i], variable); };
        const bool increments =
            (b - a == 2 && ((isVariable(a) && (isPunct(tokens_[a + 1], "++") || isPunct(tokens_[a + 1], "--"))) ||
                            (isVariable(a + 1) && (isPunct(tokens_[a], "++") || isPunct(tokens_[a], "--"))))) ||
            (b - a >= 3 && isVariable(a) && tokens_[a + 1].kind == Token::Punct &&
             (tokens_[a + 1].text == "+=" || tokens_[a + 1].text == "-=" || tokens_[a + 1].text == "*=" ||
              tokens_[a + 1].text == "/=" || tokens_[a + 1].text == "<<=" || tokens_[a + 1].text == ">>=" ||
              tokens_[a + 1].text == "=") &&
             isUniformExpression(a + 2, b));
        if (!increments) return false;
        // The body only reads it.
        for (std::size_t i = s.headerClose + 1; i < s.last; ++i)
            if (isVariable(i) && !afterMemberAccess(i) && !isReadOnlyUse(i, false)) return false;
        return true;
    }

    static bool containsBarrier(const std::vector<Token>& tokens, const Statement& s) {
        for (std::size_t i = s.first; i < s.last; ++i)
            if (isWordToken(tokens[i], "__syncthreads")) return true;
        return false;
    }

    // Whether a `break` or `continue` in `s` would leave the stretch (not caught by a loop or
    // switch inside it).
    bool leavesStretch(const Statement& s, bool inLoop, bool inSwitch) const {
        if (s.kind == Statement::Simple) {
            for (std::size_t i = s.first; i < s.last; ++i) {
                if (isWordToken(tokens_[i], "break") && !inLoop && !inSwitch) return true;
                if (isWordToken(tokens_[i], "continue") && !inLoop) return true;
            }
            return false;
        }
        const bool loop = inLoop || s.kind == Statement::For || s.kind == Statement::Loop;
        const bool sw = inSwitch || s.kind == Statement::Switch;
        for (const Statement& c : s.children)
            if (leavesStretch(c, loop, sw)) return true;
        return false;
    }

    bool analyseList(const std::vector<Statement>& statements, List& out, bool topLevel) {
        auto stretch = [&]() -> Item& {
            if (out.empty() || out.back().kind != Item::Stretch) out.push_back(Item{Item::Stretch, {}, {}, {}, nullptr, {}});
            return out.back();
        };
        for (const Statement& s : statements) {
            if (s.kind == Statement::Barrier) {
                hasBarrier_ = true;
                out.push_back(Item{Item::Barrier, {}, {}, {}, &s, {}});
                continue;
            }
            if (containsBarrier(tokens_, s)) {
                if (s.kind != Statement::For || s.children.size() != 1 || s.children[0].kind != Statement::Block)
                    return refuse("a __syncthreads() under control flow other than a `for` loop's braces, or "
                                  "inside an expression");
                if (!isUniformFor(s))
                    return refuse("a __syncthreads() in a loop whose trips may differ between threads (line " +
                                  std::to_string(source_.lineOf(tokens_[s.first].begin)) + ")");
                Item loop{Item::UniformLoop, {}, {}, {}, &s, {}};
                if (!analyseList(s.children[0].children, loop.body, false)) return false;
                out.push_back(std::move(loop));
                continue;
            }
            if (leavesStretch(s, false, false)) return refuse("a `break` or `continue` outside a loop of its own");
            const Token& head = tokens_[s.first];
            if (head.kind == Token::Word && facts_.macros.count(head.text) != 0 && facts_.constants.count(head.text) == 0)
                return refuse("a statement made by the macro `" + std::string(head.text) + "` (it may declare names)");
            if (s.kind == Statement::Simple) {
                std::optional<Declaration> d = declarationIn(s);
                if (!d && looksLikeDeclaration(s)) return refuse("a declaration the rewrite cannot read (line " +
                                                                 std::to_string(source_.lineOf(head.begin)) + ")");
                if (d) {
                    for (const auto& [name, type] : d->names) {
                        if (!declared_.insert(name).second || parameterNamed(name) != nullptr || uniform_.count(name) != 0)
                            return refuse("`" + name + "` is declared twice");
                    }
                    if (d->hoisted) {
                        if (!topLevel) return refuse("a __shared__, extern or constexpr declaration inside a loop");
                        hoisted_.push_back(&s);
                        // Not shared memory: a loop bound read from it would be one load per
                        // block here and one per thread in the coroutine version.
                        if (d->constant)
                            for (const auto& entry : d->names) uniform_.insert(entry.first);
                        continue;
                    }
                    Item& item = stretch();
                    item.statements.push_back(&s);
                    for (const auto& [name, type] : d->names) item.declares.emplace_back(name, type, d->storable);
                    continue;
                }
            }
            stretch().statements.push_back(&s);
        }
        return resolveSlots(out);
    }

    // Locals declared in a stretch of `list` and named after it get a per-thread slot.
    bool resolveSlots(List& list) {
        for (std::size_t i = 0; i < list.size(); ++i) {
            for (const auto& [name, type, storable] : list[i].declares) {
                bool later = false;
                for (std::size_t j = i + 1; j < list.size() && !later; ++j) later = namesIn(list[j], name);
                if (!later) continue;
                if (!storable) return refuse("`" + name + "` lives across a barrier and is auto, a reference or static");
                if (addressEscapes(name, type))
                    return refuse("the address of `" + name + "`, which lives across a barrier, is taken");
                list[i].declaredSlots.push_back(slots_.size());
                slots_.push_back({name, type});
            }
        }
        return true;
    }

    // Whether the address of the local `name` (of one thread's `type`) may outlive a stretch:
    // `&name`, a reference bound to it, or an array that decays to a pointer. Each stretch works
    // on a copy of a thread's slot (in registers), which such a pointer would not follow.
    bool addressEscapes(const std::string& name, const std::string& type) const {
        const bool array = type.back() == ']';
        for (std::size_t i = 0; i < tokens_.size(); ++i) {
            if (!isWordToken(tokens_[i], name) || afterMemberAccess(i)) continue;
            if (i > 0 && isPunct(tokens_[i - 1], "&") && (i < 2 || !isOperand(i - 2))) return true;
            if (bindsReference(i)) return true;
            if (array && (i + 1 >= tokens_.size() || !isPunct(tokens_[i + 1], "["))) return true;
        }
        return false;
    }

    bool namesIn(const Item& item, const std::string& name) const {
        auto inRange = [&](std::size_t first, std::size_t last) {
            for (std::size_t i = first; i < last; ++i)
                if (isWordToken(tokens_[i], name) && !afterMemberAccess(i)) return true;
            return false;
        };
        if (item.kind == Item::Stretch) {
            for (const Statement* s : item.statements)
                if (inRange(s->first, s->last)) return true;
            return false;
        }
        return item.statement != nullptr && inRange(item.statement->first, item.statement->last);
    }

    // The text of tokens [first, last) as the output has it (with the other edits applied),
    // starting on its own line under a #line directive for the line it came from.
    std::string chunk(std::size_t first, std::size_t last) const {
        std::size_t begin = tokens_[first].begin;
        const std::size_t end = tokens_[last - 1].end;
        // With the #pragma lines right before it (`#pragma unroll` before a loop).
        for (std::size_t before = source_.skipBlanksAndCommentsBackward(begin); before > 0 && source_.isDirective(before - 1);
             before = source_.skipBlanksAndCommentsBackward(begin)) {
            std::size_t lineStart = source_.text().rfind('\n', before - 1);
            lineStart = lineStart == kNotFound ? 0 : lineStart + 1;
            const std::size_t hash = source_.skipBlanksForward(lineStart);
            const std::size_t word = directiveWordAt(source_, hash);
            if (word == kNotFound || source_.wordAt(word) != "pragma") break;
            begin = lineStart;
        }
        std::vector<Edit> inside;
        for (const Edit& e : edits_)
            if (e.begin >= begin && e.end <= end) inside.push_back({e.begin - begin, e.end - begin, e.replacement});
        std::string text = source_.text().substr(begin, end - begin);
        return "\n#line " + std::to_string(source_.lineOf(begin)) + "\n" + applyEdits(text, std::move(inside)) + "\n";
    }

    void emitList(const List& list, std::vector<const SlotVariable*>& visible, std::string& out) const {
        const std::size_t scope = visible.size();
        for (const Item& item : list) {
            if (item.kind == Item::Barrier) {
                out += "\n#line " + std::to_string(source_.lineOf(tokens_[item.statement->first].begin)) +
                       "\ncudasim_block.barrier();";
            } else if (item.kind == Item::UniformLoop) {
                const Statement& s = *item.statement;
                out += chunk(s.first, s.headerClose + 1) + "{";
                emitList(item.body, visible, out);
                out += "}";
            } else if (!item.statements.empty()) {
                out += "\nCUDASIM_FOR_EACH_THREAD(cudasim_block) {";
                // The thread's values of the locals it names from earlier stretches, as locals of
                // this one (a reference to the slot would be a store to memory per update, which
                // the compiler cannot keep in a register when shared memory of the same type is
                // written in between), kept again at its end with those it declares.
                std::vector<const SlotVariable*> kept;
                for (const SlotVariable* v : visible) {
                    if (!namesIn(item, v->name)) continue;
                    out += " ::cudasim::detail::FissionLocal<" + v->type + "> " + v->name + "; ::cudasim::detail::fission_keep(" + v->name +
                           ", cudasim_slot_" + v->name + "[cudasim_block.thread()]);";
                    kept.push_back(v);
                }
                for (const Statement* s : item.statements) out += chunk(s->first, s->last);
                for (const std::size_t slot : item.declaredSlots) kept.push_back(&slots_[slot]);
                for (const SlotVariable* v : kept)
                    out += " ::cudasim::detail::fission_keep(cudasim_slot_" + v->name + "[cudasim_block.thread()], " +
                           v->name + ");";
                out += "}";
                for (const std::size_t slot : item.declaredSlots) visible.push_back(&slots_[slot]);
            }
        }
        visible.resize(scope);
    }

    const Source& source_;
    const std::vector<Edit>& edits_;
    const ProjectFacts& facts_;
    std::vector<Token> tokens_;
    const StatementParser* parser_ = nullptr;
    std::vector<Parameter> parameters_;
    NameSet constants_;  // template parameters
    NameSet uniform_;    // loop variables of uniform loops and hoisted locals
    NameSet declared_;   // locals declared at a stretch's top level
    std::vector<const Statement*> hoisted_;
    std::vector<SlotVariable> slots_;
    bool hasBarrier_ = false;
    std::string why_;
};

std::vector<Edit> cudaEdits(const Source& source, const NameSet& returningMacros, const ProjectFacts& facts) {
    std::vector<Edit> edits;
    struct Scope {
        bool code;    // a function body or a block inside one (not a namespace or class body)
        bool device;  // inside the body of a device-only function
        bool deviceCallable;  // inside the body of a function device code can call (__host__ __device__ too)
    };
    std::vector<Scope> scopes;  // one entry per open brace
    std::vector<std::pair<std::size_t, std::size_t>> fissionCandidates;  // __global__, body '{' of coroutine kernels
    auto insideFunction = [&scopes] {
        for (const Scope& scope : scopes)
            if (scope.code) return true;
        return false;
    };
    auto insideDeviceCode = [&scopes] { return !scopes.empty() && scopes.back().device; };
    auto insideDeviceCallable = [&scopes] { return !scopes.empty() && scopes.back().deviceCallable; };
    std::size_t pos = 0;
    while (pos < source.size()) {
        if (source.isCodeChar(pos, '{')) {
            const bool code = !opensNonCodeScope(source, pos);
            const bool opensFunction = code && !insideFunction();
            const bool device = insideDeviceCode() || (opensFunction && opensDeviceFunction(source, pos, false));
            const bool deviceCallable =
                insideDeviceCallable() || (opensFunction && opensDeviceFunction(source, pos, true));
            scopes.push_back({code, device, deviceCallable});
            ++pos;
        } else if (source.isCodeChar(pos, '}')) {
            if (!scopes.empty()) scopes.pop_back();
            ++pos;
        } else if (source.codeStartsWith(pos, "<<<")) {
            rewriteLaunch(source, pos, edits);
            pos += 3;
        } else if (source.isWordStart(pos)) {
            const std::string_view word = source.wordAt(pos);
            const std::size_t end = pos + word.size();
            if (word == "__global__" && !insideFunction() && !source.isDirective(pos)) {
                const std::size_t editsBefore = edits.size();
                const std::size_t bodyOpen = convertKernelWithBarriers(source, pos, returningMacros, edits);
                if (bodyOpen != kNotFound && edits.size() > editsBefore) fissionCandidates.push_back({pos, bodyOpen});
                if (bodyOpen != kNotFound) {
                    if (auto registration = registerKernel(source, pos, bodyOpen)) edits.push_back(std::move(*registration));
                    pos = bodyOpen;  // the body's '{' is handled by the loop
                    continue;
                }
            } else if (word == "extern") {
                if (auto edit = rewriteDynamicSharedDeclaration(source, pos, insideFunction())) {
                    const std::size_t declarationEnd = edit->end;
                    edits.push_back(std::move(*edit));
                    pos = declarationEnd;
                    continue;
                }
            } else if (word == "static") {
                const std::size_t next = source.skipBlanksForward(end);
                if (source.isWordStart(next) && source.wordAt(next) == "__shared__") {
                    edits.push_back({pos, end, ""});
                }
            } else if (word == "__shared__" && !source.isDirective(pos)) {
                if (auto edit = alignasBeforeShared(source, pos)) {
                    pos = edit->end;
                    edits.push_back(std::move(*edit));
                    continue;
                }
            } else if ((word == "asm" || word == "__asm" || word == "__asm__") && insideDeviceCode() &&
                       !source.isDirective(pos) && rewriteInlineAssembly(source, pos, edits)) {
                // The operands are read on as code (their own edits); the keyword was replaced.
            } else if (word == "assert" && insideDeviceCallable() && isPlainCall(source, pos)) {
                edits.push_back({pos, end, "CUDASIM_DEVICE_ASSERT"});
            } else if (const char* counted = deviceLibraryFunction(word); counted != nullptr && insideDeviceCallable()) {
                if (auto edit = renameLibraryCall(source, pos, counted)) edits.push_back(std::move(*edit));
            } else if (hostOnlyLibraryFunction(word) && insideDeviceCode() && renameLibraryCall(source, pos, "")) {
                throw RewriteError(source.lineOf(pos),
                                   std::string(word) + " is a host function: device code cannot call it (nvcc "
                                                       "refuses it too); write the loop, or use memcpy or memset");
            } else if (word == "new" && insideDeviceCallable() && !afterWord(source, pos, "operator") &&
                       !source.isCodeChar(source.skipBlanksForward(end), '(')) {
                edits.push_back({end, end, " (::cudasim::detail::device_heap)"});  // not placement new
            } else if (word == "delete" && insideDeviceCallable() && !afterWord(source, pos, "operator")) {
                if (auto call = rewriteDelete(source, pos)) {
                    edits.push_back(std::move(call->first));  // the operand is read on as code
                    edits.push_back(std::move(call->second));
                }
            } else if (word == "__CUDA_ARCH__" && source.isDirective(pos) &&
                       (insideDeviceCode() || (!insideFunction() && isArchVersionTest(source, pos)))) {
                edits.push_back({pos, end, "CUDASIM_DEVICE_ARCH"});
            }
            pos = end;
        } else {
            ++pos;
        }
    }
    // Loop fission last: its copies of the body's stretches carry the edits made inside them.
    for (const auto& [globalPos, bodyOpen] : fissionCandidates) {
        const std::size_t bodyEnd = endOfBraced(source, bodyOpen);
        if (bodyEnd == kNotFound) continue;
        KernelFission fission(source, edits, facts);
        if (auto wrap = fission.run(globalPos, bodyOpen, bodyEnd - 1)) {
            edits.insert(edits.begin(), std::move(wrap->first));  // before any edit at the same place
            edits.push_back(std::move(wrap->second));
        } else {
            // Said in the output, for whoever wonders why a kernel with barriers runs slower.
            std::string why = fission.why();
            std::replace(why.begin(), why.end(), '*', '.');  // cannot end the comment
            edits.insert(edits.begin(), Edit{bodyOpen + 1, bodyOpen + 1, " /* cudasim: not fissioned: " + why + " */"});
        }
    }
    return edits;
}

std::string escapeForLineDirective(const std::string& path) {
    std::string escaped;
    for (const char c : path) {
        if (c == '\\' || c == '"') escaped += '\\';
        escaped += c;
    }
    return escaped;
}

std::string absolutePathOf(const std::string& path) {
    std::error_code error;
    const std::filesystem::path absolute = std::filesystem::absolute(path, error);
    return error ? path : absolute.lexically_normal().string();
}

// ---------------------------------------------------------------------------------------------
// Files
// ---------------------------------------------------------------------------------------------

std::string describeErrno(int error) { return error != 0 ? std::strerror(error) : "unknown error"; }

// Reads a whole file as bytes. Returns false with a reason on failure.
bool readFile(const std::string& path, std::string& contents, std::string& reason) {
    errno = 0;
    std::FILE* file = std::fopen(path.c_str(), "rb");
    if (file == nullptr) {
        reason = describeErrno(errno);
        return false;
    }
    contents.clear();
    char buffer[1 << 16];
    std::size_t got = 0;
    while ((got = std::fread(buffer, 1, sizeof buffer, file)) > 0) contents.append(buffer, got);
    const bool failed = std::ferror(file) != 0;
    const int readErrno = errno;
    std::fclose(file);
    if (failed) {
        reason = describeErrno(readErrno);
        return false;
    }
    return true;
}

// A name next to `target` that no concurrent run of this tool will pick too.
std::string temporaryNameFor(const std::string& target) {
    std::random_device entropy;
    std::mt19937_64 generator(entropy() ^ static_cast<std::uint64_t>(
                                              std::chrono::high_resolution_clock::now().time_since_epoch().count()));
    char suffix[32];
    std::snprintf(suffix, sizeof suffix, ".tmp%016llx", static_cast<unsigned long long>(generator()));
    return target + suffix;
}

// Writes `contents` to `path` unless the file already holds exactly that. The new content goes
// to a temporary file that is then renamed over `path`, so readers never see a half-written
// file and an interrupted run leaves the old output intact.
bool writeFileIfChanged(const std::string& path, const std::string& contents, std::string& reason) {
    std::string existing;
    std::string ignoredReason;
    if (readFile(path, existing, ignoredReason) && existing == contents) return true;

    const std::string temporary = temporaryNameFor(path);
    errno = 0;
    std::FILE* file = std::fopen(temporary.c_str(), "wb");
    if (file == nullptr) {
        reason = describeErrno(errno);
        return false;
    }
    const bool written = std::fwrite(contents.data(), 1, contents.size(), file) == contents.size();
    const int writeErrno = errno;
    const bool closed = std::fclose(file) == 0;
    if (!written || !closed) {
        reason = describeErrno(writeErrno != 0 ? writeErrno : errno);
        std::remove(temporary.c_str());
        return false;
    }

    std::error_code error;
    std::filesystem::rename(temporary, path, error);
    if (error) {
        reason = error.message();
        std::remove(temporary.c_str());
        return false;
    }
    return true;
}

int failUsage(const std::string& message) {
    std::cerr << kToolName << ": " << message << '\n';
    return 2;
}

// ---------------------------------------------------------------------------------------------
// Project headers
//
// A launch or an `extern __shared__` in a header must be rewritten as much as in the .cu file,
// so the tool follows the file's quoted #includes (see the header comment for the rules).
// ---------------------------------------------------------------------------------------------

namespace fs = std::filesystem;

// The header name of a quoted #include: [nameBegin, nameEnd) lies between the quotes.
struct QuotedInclude {
    std::size_t nameBegin;
    std::size_t nameEnd;
};

std::vector<QuotedInclude> quotedIncludes(const Source& source) {
    std::vector<QuotedInclude> includes;
    for (const std::size_t word : directiveWords(source)) {
        if (source.wordAt(word) != "include") continue;
        std::size_t open = source.wordEnd(word);
        while (open < source.size() && (source.text()[open] == ' ' || source.text()[open] == '\t')) ++open;
        if (open >= source.size() || source.text()[open] != '"' || source.isCode(open)) continue;
        const std::size_t close = source.text().find_first_of("\"\n", open + 1);
        if (close == kNotFound || source.text()[close] != '"') continue;
        includes.push_back({open + 1, close});
    }
    return includes;
}

// Where the compiler finds `#include "name"` written in a file of `includerDirectory`: that
// folder, then the -iquote and -I folders in order. Absolute names are left to the compiler.
std::optional<fs::path> findQuotedHeader(const fs::path& includerDirectory, const std::string& name,
                                         const std::vector<fs::path>& searchDirectories) {
    const fs::path relative(name);
    if (name.empty() || relative.is_absolute()) return std::nullopt;
    std::vector<fs::path> candidates{includerDirectory / relative};
    for (const fs::path& directory : searchDirectories) candidates.push_back(directory / relative);
    for (const fs::path& candidate : candidates) {
        std::error_code error;
        if (fs::is_regular_file(candidate, error)) return candidate.lexically_normal();
    }
    return std::nullopt;
}

// The .cu file or one of the project headers it includes, directly or not.
struct ProjectFile {
    ProjectFile(std::string name, fs::path absolute, std::string text)
        : messageName(std::move(name)), path(std::move(absolute)) {
        // A UTF-8 byte order mark must stay the very first bytes of the file, before the #line.
        if (text.compare(0, kByteOrderMark.size(), kByteOrderMark) == 0) {
            byteOrderMark = true;
            text.erase(0, kByteOrderMark.size());
        }
        source.emplace(std::move(text));
    }

    // The rewritten text: the #line directive, then the file with its edits.
    std::string rewrittenText() const {
        std::string result = byteOrderMark ? std::string(kByteOrderMark) : std::string();
        result += "#line 1 \"" + escapeForLineDirective(path.string()) + "\"\n";
        return result + applyEdits(source->text(), edits);
    }

    static constexpr std::string_view kByteOrderMark = "\xEF\xBB\xBF";
    std::string messageName;  // how error messages name it
    fs::path path;            // absolute, for #line and the depfile
    bool byteOrderMark = false;
    std::optional<Source> source;
    std::vector<std::pair<QuotedInclude, std::size_t>> includes;  // with the included file's index
    std::vector<Edit> edits;
    bool rewritten = false;  // written to the output (the .cu file) or the header folder
    fs::path output;         // where, when rewritten
};

struct Options {
    std::string input;
    std::string output;
    std::string depfile;
    std::vector<fs::path> quoteDirectories;    // -iquote
    std::vector<fs::path> includeDirectories;  // -I
};

// Reads the .cu file and, transitively, every project header it includes with quotes.
// Returns false (with the reason) when the .cu file cannot be read; an unreadable header is
// left to the compiler.
bool loadProject(const Options& options, std::vector<ProjectFile>& files, std::string& reason) {
    std::string text;
    if (!readFile(options.input, text, reason)) return false;
    files.emplace_back(options.input, fs::path(absolutePathOf(options.input)), std::move(text));

    std::vector<fs::path> searchDirectories = options.quoteDirectories;
    searchDirectories.insert(searchDirectories.end(), options.includeDirectories.begin(),
                             options.includeDirectories.end());
    std::vector<fs::path> identities;  // canonical paths, one per file
    const auto identityOf = [](const fs::path& path) {
        std::error_code error;
        const fs::path canonical = fs::weakly_canonical(path, error);
        return error ? path : canonical;
    };
    identities.push_back(identityOf(files.front().path));

    for (std::size_t i = 0; i < files.size(); ++i) {  // files grows while it is walked
        for (const QuotedInclude& include : quotedIncludes(*files[i].source)) {
            const std::string name =
                files[i].source->text().substr(include.nameBegin, include.nameEnd - include.nameBegin);
            const std::optional<fs::path> found =
                findQuotedHeader(files[i].path.parent_path(), name, searchDirectories);
            if (!found) continue;
            const fs::path identity = identityOf(*found);
            const std::size_t index = static_cast<std::size_t>(
                std::find(identities.begin(), identities.end(), identity) - identities.begin());
            if (index == identities.size()) {
                std::string ignoredReason;
                if (!readFile(found->string(), text, ignoredReason)) continue;
                const std::string absolute = absolutePathOf(found->string());
                files.emplace_back(absolute, fs::path(absolute), std::move(text));
                identities.push_back(identity);
            }
            files[i].includes.emplace_back(include, index);
        }
    }
    return true;
}

// Decides which files are written (the .cu file, the headers with edits and those that include
// a written one), where, and points their #includes at the rewritten copies.
void placeRewrittenFiles(std::vector<ProjectFile>& files, const fs::path& output, const fs::path& headerFolder) {
    files.front().rewritten = true;
    for (ProjectFile& file : files) file.rewritten = file.rewritten || !file.edits.empty();
    for (bool grew = true; grew;) {
        grew = false;
        for (ProjectFile& file : files) {
            if (file.rewritten) continue;
            file.rewritten = std::any_of(file.includes.begin(), file.includes.end(),
                                         [&files](const auto& include) { return files[include.second].rewritten; });
            grew = grew || file.rewritten;
        }
    }
    files.front().output = output;
    int copies = 0;
    for (ProjectFile& file : files) {
        if (file.rewritten && file.output.empty())
            file.output = headerFolder / std::to_string(++copies) / file.path.filename();
    }

    for (ProjectFile& file : files) {
        if (!file.rewritten) continue;
        const bool isInput = &file == &files.front();
        for (const auto& [include, index] : file.includes) {
            const ProjectFile& header = files[index];
            // The .cu file's includes of unchanged headers work as they are (the compiler gets
            // the same folders); a copy's all name their file exactly, as it moved elsewhere.
            if (isInput && !header.rewritten) continue;
            const fs::path target = header.rewritten ? header.output.lexically_relative(file.output.parent_path())
                                                     : header.path;
            const std::string name = target.generic_string();
            if (name.empty() || name.find_first_of("\"\r\n") != kNotFound) continue;  // not writable in an #include
            file.edits.push_back({include.nameBegin, include.nameEnd, name});
        }
    }
}

// Removes from the header folder what an earlier run wrote and this one did not.
void removeStaleCopies(const fs::path& headerFolder, const std::vector<ProjectFile>& files) {
    std::error_code error;
    if (!fs::is_directory(headerFolder, error)) return;
    std::vector<fs::path> stale;
    for (auto it = fs::recursive_directory_iterator(headerFolder, error); !error && it != fs::recursive_directory_iterator();
         it.increment(error)) {
        const bool written = std::any_of(files.begin(), files.end(),
                                         [&it](const ProjectFile& file) { return file.output == it->path(); });
        if (!written) stale.push_back(it->path());
    }
    std::sort(stale.rbegin(), stale.rend());  // a folder's entries before the folder
    for (const fs::path& path : stale) {
        if (fs::is_directory(path, error) && !fs::is_empty(path, error)) continue;
        fs::remove(path, error);
    }
    if (fs::is_empty(headerFolder, error)) fs::remove(headerFolder, error);
}

// Make and Ninja depfile syntax: `target: dependency...`, spaces and '#' escaped.
std::string escapeForDepfile(const std::string& path) {
    std::string escaped;
    for (const char c : path) {
        if (c == ' ' || c == '#') escaped += '\\';
        if (c == '$') escaped += '$';
        escaped += c;
    }
    return escaped;
}

std::string depfileText(const std::string& output, const std::vector<ProjectFile>& files) {
    std::string text = escapeForDepfile(output) + ":";
    for (const ProjectFile& file : files) text += " \\\n  " + escapeForDepfile(file.path.string());
    return text + "\n";
}

// Parses the command line; returns an error message, empty when it is valid.
std::string parseOptions(int argc, char** argv, Options& options) {
    constexpr const char* kUsage =
        "usage: cudasim_rewrite [-iquote DIR]... [-I DIR]... [--depfile FILE] INPUT.cu OUTPUT.cpp";
    std::vector<std::string> positional;
    for (int i = 1; i < argc; ++i) {
        const std::string argument = argv[i];
        const bool takesValue = argument == "-iquote" || argument == "-I" || argument == "--depfile";
        if (takesValue && i + 1 == argc) return "option '" + argument + "' needs a value (" + kUsage + ")";
        if (argument == "-iquote") {
            options.quoteDirectories.emplace_back(absolutePathOf(argv[++i]));
        } else if (argument == "-I") {
            options.includeDirectories.emplace_back(absolutePathOf(argv[++i]));
        } else if (argument.rfind("-I", 0) == 0) {
            options.includeDirectories.emplace_back(absolutePathOf(argument.substr(2)));
        } else if (argument == "--depfile") {
            options.depfile = argv[++i];
        } else if (argument.size() > 1 && argument[0] == '-') {
            return "unknown option '" + argument + "' (" + kUsage + ")";
        } else {
            positional.push_back(argument);
        }
    }
    if (positional.size() != 2) {
        return "expected 2 arguments, got " + std::to_string(positional.size()) + " (" + kUsage + ")";
    }
    options.input = positional[0];
    options.output = positional[1];
    return {};
}

}  // namespace

int main(int argc, char** argv) {
    Options options;
    const std::string usageError = parseOptions(argc, argv, options);
    if (!usageError.empty()) return failUsage(usageError);

    std::vector<ProjectFile> files;
    std::string reason;
    if (!loadProject(options, files, reason)) {
        return failUsage("cannot read input '" + options.input + "': " + reason);
    }

    std::vector<const Source*> sources;
    for (const ProjectFile& file : files) sources.push_back(&*file.source);
    const NameSet macrosThatReturn = returningMacros(sources);
    const ProjectFacts facts = projectFacts(sources);
    for (ProjectFile& file : files) {
        try {
            file.edits = cudaEdits(*file.source, macrosThatReturn, facts);
        } catch (const RewriteError& error) {
            std::cerr << file.messageName << ':' << error.line << ": error: " << error.what() << '\n';
            return 1;
        }
    }

    const fs::path output(absolutePathOf(options.output));
    const fs::path headerFolder(output.string() + ".headers");
    placeRewrittenFiles(files, output, headerFolder);

    // The headers first, so that the output is never newer than what it includes.
    std::error_code error;
    for (const ProjectFile& file : files) {
        if (!file.rewritten || &file == &files.front()) continue;
        fs::create_directory(headerFolder, error);
        fs::create_directory(file.output.parent_path(), error);
        if (!writeFileIfChanged(file.output.string(), file.rewrittenText(), reason)) {
            return failUsage("cannot write header '" + file.output.string() + "': " + reason);
        }
    }
    if (!writeFileIfChanged(options.output, files.front().rewrittenText(), reason)) {
        return failUsage("cannot write output '" + options.output + "': " + reason);
    }
    removeStaleCopies(headerFolder, files);
    if (!options.depfile.empty() && !writeFileIfChanged(options.depfile, depfileText(options.output, files), reason)) {
        return failUsage("cannot write depfile '" + options.depfile + "': " + reason);
    }
    return 0;
}
