package labsvc

import (
	"io"
	"log"
	"os"
	"sync"

	"github.com/sirupsen/logrus"
)

var logMu sync.Mutex

// setDistributionLogging silences distribution's logrus output unless debug
// is set. logrus's standard logger is process-wide: the last call wins.
func setDistributionLogging(debug bool) {
	logMu.Lock()
	defer logMu.Unlock()
	if debug {
		logrus.SetOutput(os.Stderr)
		logrus.SetLevel(logrus.DebugLevel)
		return
	}
	logrus.SetOutput(io.Discard)
	logrus.SetLevel(logrus.PanicLevel)
}

func discardLogger() *log.Logger { return log.New(io.Discard, "", 0) }
