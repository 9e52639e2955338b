"""Reading stored strategy traces: retriever nodes in order, through nested strategy traces."""

from rag.strategies.traces import agentic_rounds, retriever_nodes


def node(node_id, *children, rounds=()):
    return {"id": node_id, "class": "X", "children": list(children), "rounds": list(rounds)}


ROUTED = {"strategy": "RoutedStrategy", "steps": [
    {"step": "route", "branch": "docs"},
    {"step": "branch", "trace": {"strategy": "NaiveRAG", "steps": [
        {"step": "retrieve", "node": node("n1", node("n2", rounds=[{"round": 1}, {"round": 2}]), node("n3"))},
        {"step": "generate"},
    ]}},
    {"step": "extra", "node": node("n4", rounds=[{"round": 1}])},
]}


def test_nodes_come_each_before_its_children_in_step_order_through_nested_traces():
    assert [found["id"] for found in retriever_nodes(ROUTED)] == ["n1", "n2", "n3", "n4"]
    assert list(retriever_nodes({"steps": []})) == []


def test_agentic_rounds_carry_the_id_of_their_node():
    assert agentic_rounds(ROUTED) == [{"node_id": "n2", "round": 1}, {"node_id": "n2", "round": 2},
                                      {"node_id": "n4", "round": 1}]
