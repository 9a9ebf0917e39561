//go:build race

package steps_test

const raceDetector = true
