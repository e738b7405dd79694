"""The store's records as JSON (graph_server.record_data) mirror the records themselves."""

from graph_server.record_data import EdgeData, GraphData, NodeData, graph_data
from graph_server.records import EdgeOut, GetGraphAnswer, NodeOut
from graph_server.store import GraphStore


def test_each_json_record_has_exactly_the_keys_of_its_store_record_in_order() -> None:
    for data, model in ((NodeData, NodeOut), (EdgeData, EdgeOut), (GraphData, GetGraphAnswer)):
        assert list(data.__annotations__) == list(model.model_fields)


def test_graph_data_is_the_graph_the_store_dumps() -> None:
    store = GraphStore()
    store.assert_graph("g", [{"id": "A", "claim": "Acme paid.", "type": "given"}])
    graph = store.get_graph("g")
    assert graph_data(graph) == graph.model_dump()
