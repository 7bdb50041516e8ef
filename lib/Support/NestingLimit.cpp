//===- NestingLimit.cpp - Refuse IR nested deeper than the parser's stack -===//

#include "recur/Support/NestingLimit.h"

#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

const char *mlir::recur::findExcessiveNesting(StringRef text,
                                              unsigned maxDepth) {
  unsigned depth = 0;
  for (const char *p = text.begin(), *end = text.end(); p < end; ++p) {
    switch (*p) {
    case '"': // a string: skip to its closing quote, over escapes
      for (++p; p < end && *p != '"'; ++p)
        if (*p == '\\')
          ++p;
      break;
    case '/': // a comment runs to the end of the line
      if (p + 1 < end && p[1] == '/')
        while (p < end && *p != '\n')
          ++p;
      break;
    case '{':
    case '(':
    case '[':
    case '<':
      if (++depth > maxDepth)
        return p;
      break;
    case '>':
      if (p > text.begin() && p[-1] == '-') // the arrow of `->`
        break;
      [[fallthrough]];
    case '}':
    case ')':
    case ']':
      if (depth) // unbalanced text is the parser's to report
        --depth;
      break;
    default:
      break;
    }
  }
  return nullptr;
}

LogicalResult mlir::recur::checkNestingDepth(const llvm::MemoryBuffer &buffer,
                                             unsigned maxDepth) {
  const char *where = findExcessiveNesting(buffer.getBuffer(), maxDepth);
  if (!where)
    return success();
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBuffer(buffer.getBuffer(),
                                       buffer.getBufferIdentifier(),
                                       /*RequiresNullTerminator=*/false),
      llvm::SMLoc());
  sourceMgr.PrintMessage(llvm::errs(), llvm::SMLoc::getFromPointer(where),
                         llvm::SourceMgr::DK_Error,
                         "nesting deeper than " + llvm::Twine(maxDepth) +
                             " levels (regions, types, attributes): refused "
                             "before parsing, which would overflow the stack");
  return failure();
}
