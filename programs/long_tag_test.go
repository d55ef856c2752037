//go:build long

package programs

func init() { longTag = true }
