@two-callers
Feature: Runs belong to their team
  A run belongs to the team of the caller who created it. A caller of
  another team cannot read it, cancel it, read its conversation (by the
  run or by the conversation's own id), transcript, messages or events,
  nor the artifacts it left, and no listing of theirs shows it, whatever
  the filters, the order or the page. The published document lists both
  403 and 404 for such a run: a server may refuse it as forbidden or hide
  that it exists. A team's environments are its own too: a run cannot be
  started in an environment only another team lists. (Another team's
  schedules: schedules.feature.)

  These scenarios need two keys of different teams: the suite's key, and
  another team's key given with --other-api-key. Without one they are
  skipped, saying so. Against the bundled mock the suite uses two fixture
  keys of different teams.

  "{label}" stands for a config name made up for each scenario; the other
  team's run carries it too, so that a listing filtered by it would show that
  run if the server let it through.

  Every scenario here that creates runs shares one set of them, made once
  (@shares-runs): a run of the suite's team and one of the other team,
  which has ended, so that it has events, a conversation and a transcript
  to leak.

  @creates-runs @shares-runs
  Scenario: Another team's run cannot be fetched
    Given I created 1 run
    And another team has created a run
    And the other team's run has ended
    When I fetch the other team's run
    Then the response is a problem with status 403 and code "not_authorized", or 404 and "resource_not_found"

  # The run has ended: a cancel, refused as it must be, changes nothing of
  # it, so that it can be shared; one let through is caught all the same.
  @creates-runs @shares-runs
  Scenario: Another team's run cannot be cancelled
    Given I created 1 run
    And another team has created a run
    And the other team's run has ended
    When I cancel the other team's run
    Then the response is a problem with status 403 and code "not_authorized", or 404 and "resource_not_found"

  # The run has ended, so that it has events, a conversation and a
  # transcript to leak.
  @creates-runs @shares-runs
  Scenario Outline: Another team's run is refused to <operation>
    Given I created 1 run
    And another team has created a run
    And the other team's run has ended
    When I send "<request>"
    Then the response is a problem with status 403 and code "not_authorized", or 404 and "resource_not_found"

    Examples:
      | operation          | request                                  |
      | its conversation   | GET /agent/runs/{their run}/conversation |
      | its transcript     | GET /agent/runs/{their run}/transcript   |
      | its messages       | GET /agent/messages/{their run}          |

  # The other team asks for the conversation by the id its own run shows
  # it; a run that ended before a worker claimed it shows none, and leaves
  # the scenario inconclusive.
  @creates-runs @shares-runs
  Scenario: Another team's conversation is refused by its id
    Given I created 1 run
    And another team has created a run
    And the other team's run has ended
    When I fetch the other team's run's conversation by its id
    Then the response is a problem with status 403 and code "not_authorized", or 404 and "resource_not_found"

  # Any artifact the runs of the suite's team show will do, asked for with
  # the other team's key; when they show none the scenario is inconclusive.
  Scenario: Another team's artifacts are refused
    When I fetch up to 3 artifacts of each kind that the runs I can see show
    And another team fetches each of those artifacts
    Then each was refused to the other team with status 403 and code "not_authorized", or 404 and "resource_not_found"

  # Needs an environment the other team lists and the suite's team does
  # not; when the two teams list the same ones the scenario is
  # inconclusive. The document gives a create 400 and 403: a server may
  # refuse the environment as not the caller's, or as unknown to it. It
  # does not say the refusal must come at creation: a server may accept
  # the run and end it FAILED or ERROR before any worker claims it, as
  # long as the run shows nothing of that environment. A run claimed,
  # started or succeeded there fails.
  @creates-runs
  Scenario: A run cannot be started in another team's environment
    Given an environment the other team lists and my team does not
    When I create a run in that environment
    Then the run was refused, or ended in FAILED or ERROR before a worker claimed it there, showing nothing of that environment

  # Polling events names runs: a server may refuse a poll naming another
  # team's run, or answer without its events.
  @creates-runs @shares-runs
  Scenario: Another team's run's events are never shown
    Given I created 1 run
    And another team has created a run
    And the other team's run has ended
    When I poll the other team's run's events
    Then no event of the other team's run is shown

  @creates-runs @shares-runs
  Scenario Outline: Another team's run is never listed, <listing>
    Given I created 1 run
    And another team has created a run
    And the other team's run has ended
    When I walk every page of "<query>"
    Then the walk never saw the other team's run
    And the walk saw each of the runs I created exactly once

    Examples:
      | listing                       | query                                                                 |
      | by name                       | name={label}&sort_by=created_at&limit=1                               |
      | by name, oldest first         | name={label}&sort_by=created_at&sort_order=asc&limit=1                |
      | by name and source            | name={label}&source=API&sort_by=created_at&limit=1                    |
      | by name and creation time     | name={label}&created_after=2000-01-01T00:00:00Z&sort_by=created_at&limit=1 |
      | by name and every state       | name={label}&state=QUEUED&state=PENDING&state=CLAIMED&state=INPROGRESS&state=BLOCKED&state=SUCCEEDED&state=FAILED&state=ERROR&state=CANCELLED&sort_by=created_at&limit=1 |

  # Without a name to filter by, the walk may meet many runs of the caller's
  # own team on a busy server; it only looks out for the other team's run.
  @creates-runs @shares-runs
  Scenario: Another team's run is never listed among all the runs created since mine
    Given I created 1 run
    And another team has created a run
    And the other team's run has ended
    When I walk every page of "created_after={created_at of run 1}&sort_by=created_at&sort_order=asc&limit=3"
    Then the walk never saw the other team's run
