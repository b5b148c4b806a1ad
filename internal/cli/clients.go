//go:build !noclients

package cli

import "github.com/spf13/cobra"

// clientCommands are the commands that need a Kubernetes or cloud client
// (client-go, the AWS, Azure and Google SDKs) or the lab's clusters. A new
// such command is added here, and its file carries //go:build !noclients,
// so that the front build (front.go) never links it.
func clientCommands(s Streams) []*cobra.Command {
	return []*cobra.Command{
		newDiagnoseCommand(s),
		newSweepCommand(s),
		newLabCommand(s),
		newMonitorCommand(s),
		newAWSCommand(s),
		newAzureCommand(s),
		newGCPCommand(s),
	}
}

// handOff: this build runs every command itself.
func handOff([]string, Streams) (int, bool) { return 0, false }
