//go:build long

package fp

func init() { longTag = true }
