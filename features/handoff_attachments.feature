@newest-client
Feature: Handoff attachments
  GET /agent/runs/{runId}/handoff/attachments lists the snapshot files the
  run's latest ended execution left for whoever continues the work, each
  with a fresh, signed download link. The list is empty while no execution
  has ended, or when the last one left no files.

  The operation is newer than the published document (May 2026): the
  official client oz-agent-sdk 1.4.0-alpha.6 calls it. The suite judges
  these scenarios where the server serves the operation, or where
  --newest-client promises it; elsewhere they are skipped, saying so.

  # The files are listed just before each look at the run: a look that
  # finds the run not ended says it had not ended at the listing before.
  # A run that has ended by the first look leaves the scenario
  # inconclusive.
  @creates-runs
  Scenario: A run that has not ended has no handoff files
    When I create a run with the prompt "Profile the search endpoint"
    And I watch the run until it reaches a terminal state, listing its handoff attachments before each look
    Then every handoff listing made before a look that found the run not ended was empty

  @creates-runs @slow
  Scenario: A finished run's handoff files each have an id, a name and a download link
    When I create a run with the prompt "Refactor the billing module"
    And I watch the run until it reaches a terminal state
    And I list the run's handoff attachments
    Then every handoff attachment has an id, a file name and an absolute download URL
    When I list the run's handoff attachments again
    Then the handoff attachments are the same files as before

  @mock-only @mock-control @creates-runs
  Scenario: On the mock, a run's handoff files come from its fate
    Given the mock will end my next run with the handoff files "workspace.tar.gz" and "notes.md"
    When I create a run with the prompt "Prepare the handoff"
    And I list the run's handoff attachments
    Then the run has no handoff attachments
    When the mock puts the run into "SUCCEEDED"
    And I list the run's handoff attachments
    Then the run's handoff attachments are "workspace.tar.gz" and "notes.md"
    And every handoff attachment has an id, a file name and an absolute download URL
    And each handoff download URL, fetched without my API key, gives the file

  Scenario: Handoff files of a run that does not exist are a 404
    When I send "GET /agent/runs/{unknown}/handoff/attachments"
    Then the response is a problem with status 404 and code "resource_not_found"

  Scenario: Handoff files need credentials
    When I send "GET /agent/runs/{unknown}/handoff/attachments" with no Authorization header
    Then the response is a problem with status 401 and code "authentication_required"
