package main

// Blank imports keep the chosen dependencies pinned in go.mod until the
// packages that use them land. Remove an entry once real code imports it.
import (
	_ "github.com/gdamore/tcell/v2"
	_ "github.com/rivo/tview"
	_ "github.com/sbinet/npyio"
	_ "github.com/spf13/viper"
	_ "github.com/x448/float16"
	_ "gonum.org/v1/gonum/mat"
	_ "gonum.org/v1/plot"
)
