// Package docrefs holds the tests that keep the repository explaining itself
// (docs/architecture.md, "Documentation"): no tracked file cites a document that lives outside
// the repository, every link of README.md and docs/ leads to a file and a heading that exist,
// and every reference a comment makes to a page of docs/ (docs/api.md, "Problem codes") names
// a page and a heading that exist.
//
// It has no code of its own besides the tests; it imports the standard library only.
package docrefs
