package pack

// For the external tests of this package (package pack_test), which may
// import packages that import pack.
var (
	CheckGolden = checkGolden
	TestCatalog = testCatalog
)
