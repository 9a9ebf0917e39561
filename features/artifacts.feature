Feature: Artifacts
  A run that succeeds may leave artifacts behind: a plan, a pull request, a
  screenshot, a file. The run lists them under "artifacts", and every one
  but the pull request carries an "artifact_uid" that
  GET /agent/artifacts/{artifactUid} takes: a plan comes back with its
  current markdown, a screenshot or a file with a download URL that works
  without the API's credentials until "expires_at". A pull request is not
  fetched there: its url in the run is where it lives.

  Scenario: Artifacts need credentials
    When I send "GET /agent/artifacts/{unknown}" with no Authorization header
    Then the response is a problem with status 401 and code "authentication_required"

  Scenario: An artifact that does not exist is not found
    When I send "GET /agent/artifacts/{unknown}"
    Then the response is a problem with status 404 and code "resource_not_found"

  Scenario: The artifacts runs show can be fetched, each as its run shows it
    When I fetch up to 3 artifacts of each kind that the runs I can see show
    Then each fetched artifact is the one its run shows
    And each fetched plan has its markdown content
    And each fetched screenshot and file downloads from its URL as announced

  # A download URL works until its expires_at, and not after. The suite
  # waits for that instant when it is within its patience (--timeout), or
  # moves the mock's clock there; a URL that lives longer than the patience
  # leaves the scenario inconclusive, not failed. What a refusal looks like
  # is the storage service's: any 4xx.
  Scenario: The download URLs of screenshots and files are refused once expired
    When I fetch up to 3 artifacts of each kind that the runs I can see show
    Then each fetched screenshot and file downloads from its URL as announced
    And once their expires_at has passed, each fetched screenshot and file's download URL is refused

  @mock-only
  Scenario: An artifact uid that is not a UUID is refused, naming the field
    When I send "GET /agent/artifacts/not-a-uuid"
    Then the response is a problem with status 400 and code "invalid_request"
    And the problem's detail names "artifactUid"

  @creates-runs @mock-control
  Scenario: A run that succeeds shows its artifacts, and each but the pull request can be fetched
    Given the mock will give my next run the artifacts PLAN, PULL_REQUEST, SCREENSHOT and FILE
    When I create a run with the prompt "Redesign the settings page. Keep every control reachable by keyboard."
    And I watch the run until it reaches a terminal state
    Then the run is in state "SUCCEEDED"
    And the run shows the artifacts PLAN, PULL_REQUEST, SCREENSHOT and FILE, in that order
    When I fetch each artifact the run shows
    Then each fetched artifact is the one its run shows
    And each fetched plan has its markdown content
    And the fetched plan's content says "Keep every control reachable by keyboard."
    And each fetched screenshot and file downloads from its URL as announced

  @creates-runs @mock-control @mock-only
  Scenario Outline: A <kind>'s download URL stops working when it expires, and the artifact gives a new one
    Given the mock will give my next run the artifacts <kind>
    When I create a run with the prompt "Capture the dashboard after the fix"
    And I watch the run until it reaches a terminal state
    And I fetch the run's <kind> artifact
    Then its download URL works
    When an hour passes on the mock's clock
    Then its download URL is refused with status 403
    When I fetch the run's <kind> artifact
    Then its download URL works

    Examples:
      | kind       |
      | SCREENSHOT |
      | FILE       |
