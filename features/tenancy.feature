@two-callers
Feature: Runs belong to their team
  A run belongs to the team of the caller who created it. A caller of
  another team cannot read it (403) nor cancel it (403), and no listing of
  theirs shows it, whatever the filters, the order or the page.

  These scenarios need two keys of different teams: the suite's key, and
  another team's key given with --other-api-key. Without one they are
  skipped, saying so. Against the bundled mock the suite uses two fixture
  keys of different teams.

  "{label}" stands for a config name made up for each scenario; the other
  team's run carries it too, so that a listing filtered by it would show that
  run if the server let it through.

  @creates-runs
  Scenario: Another team's run cannot be fetched
    Given another team has created a run
    When I fetch the other team's run
    Then the response is a problem with status 403 and code "not_authorized"

  @creates-runs
  Scenario: Another team's run cannot be cancelled
    Given another team has created a run
    When I cancel the other team's run
    Then the response is a problem with status 403 and code "not_authorized"

  @creates-runs
  Scenario Outline: Another team's run is never listed, <listing>
    Given I created 2 runs
    And another team has created a run
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
  @creates-runs
  Scenario: Another team's run is never listed among all the runs created since mine
    Given I created 2 runs
    And another team has created a run
    When I walk every page of "created_after={created_at of run 1}&sort_by=created_at&sort_order=asc&limit=3"
    Then the walk never saw the other team's run
