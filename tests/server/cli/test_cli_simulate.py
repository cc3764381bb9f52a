"""`patrician simulate`: the main job until the server exists."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from server.cli.main import main
from server.config.card_data import default_card_file


def test_simulate_plays_games_and_prints_a_summary() -> None:
    result = CliRunner().invoke(
        main, ["simulate", "--games", "20", "--seats", "2", "--edition", "towers", "--seed", "1"]
    )
    assert result.exit_code == 0, result.output
    assert "20 random games (towers, 2 seats), seed 1" in result.output
    assert "games per second" in result.output
    assert "Architetto" in result.output
    assert "shared wins" in result.output


def test_simulate_piped_prints_only_the_summary_and_counts_one_game_as_one() -> None:
    result = CliRunner().invoke(main, ["simulate", "--games", "1", "--seats", "2", "--seed", "1"])
    assert result.exit_code == 0, result.output
    assert result.output.startswith("1 random game (towers, 2 seats), seed 1\n")
    assert "Playing" not in result.output


def test_simulate_with_the_same_seed_prints_the_same_scores() -> None:
    args = ["simulate", "--games", "5", "--seats", "3", "--edition", "classic", "--seed", "9"]
    first = CliRunner().invoke(main, args).output.splitlines()
    second = CliRunner().invoke(main, args).output.splitlines()
    assert [line for line in first if "mean score" in line] == [
        line for line in second if "mean score" in line
    ]


def test_simulate_show_prints_one_game_turn_by_turn() -> None:
    result = CliRunner().invoke(
        main, ["simulate", "--show", "--seats", "4", "--module", "delegates", "--seed", "3"]
    )
    assert result.exit_code == 0, result.output
    assert "-- seat 0's turn --" in result.output
    assert "The game is over." in result.output
    assert "Winner:" in result.output


def test_simulate_refuses_impossible_options_with_the_reason() -> None:
    result = CliRunner().invoke(main, ["simulate", "--edition", "classic", "--module", "delegates"])
    assert result.exit_code != 0
    assert "towers edition" in result.output
    assert "--module" in result.output and "--modules" not in result.output
    result = CliRunner().invoke(main, ["simulate", "--seats", "7"])
    assert result.exit_code != 0


def test_simulate_plays_a_users_card_file_and_refuses_a_broken_one(tmp_path: Path) -> None:
    own = tmp_path / "printed.json"
    own.write_bytes(default_card_file())
    result = CliRunner().invoke(main, ["simulate", "--games", "3", "--card-file", str(own)])
    assert result.exit_code == 0, result.output
    data = json.loads(default_card_file())
    data["cards"][0]["crests"] = 3
    own.write_text(json.dumps(data))
    result = CliRunner().invoke(main, ["simulate", "--card-file", str(own)])
    assert result.exit_code != 0
    assert "BOL-1" in result.output


def test_simulate_between_bots_prints_each_levels_wins_with_an_interval_and_mean_score() -> None:
    result = CliRunner().invoke(
        main, ["simulate", "--bots", "greedy,random", "--games", "6", "--seed", "4"]
    )
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0] == "6 games between greedy, random (towers, 2 seats), seed 4"
    for level in ("greedy", "random", "Architetto"):
        (line,) = [line for line in lines if line.strip().startswith(f"{level}:")]
        assert "wins" in line and "95 % interval" in line and "mean score" in line


def test_simulate_show_between_bots_tells_which_level_made_each_decision() -> None:
    result = CliRunner().invoke(
        main, ["simulate", "--bots", "ismcts,greedy", "--show", "--seed", "2", "--ismcts-ms", "5"]
    )
    assert result.exit_code == 0, result.output
    assert "-- seat 0's turn (ismcts) --" in result.output
    assert "[greedy]" in result.output and "[ismcts]" in result.output
    assert "The game is over." in result.output


def test_simulate_refuses_an_unknown_level_or_a_wrong_number_of_them() -> None:
    for bots, words in (("greedy,genius", "'genius' is not a level"), ("greedy," * 6, "2 to 5")):
        result = CliRunner().invoke(main, ["simulate", "--bots", bots])
        assert result.exit_code != 0 and words in result.output, result.output
