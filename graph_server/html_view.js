// The page's behaviour: zoom and pan the drawing, inspect a claim, filter, and follow links
// between a claim and the sentence it cites. The drawing is static SVG made in Python; this
// script only changes the viewBox and classes. Untrusted text only ever goes in through
// textContent, never innerHTML.
"use strict";
(function () {
  const data = JSON.parse(document.getElementById("lg-data").textContent);
  const svg = document.getElementById("graph");
  const canvas = document.getElementById("canvas");
  const inspector = document.getElementById("inspector");
  const full = svg.dataset.view.split(" ").map(Number);
  let box = full.slice();

  function show(view) {
    box = view;
    svg.setAttribute("viewBox", view.map((v) => v.toFixed(2)).join(" "));
  }

  function zoom(factor, cx, cy) {
    const w = box[2] * factor, h = box[3] * factor;
    const x = cx === undefined ? box[0] + box[2] / 2 : cx;
    const y = cy === undefined ? box[1] + box[3] / 2 : cy;
    show([x - (x - box[0]) * factor, y - (y - box[1]) * factor, w, h]);
  }

  function svgPoint(event) {
    const rect = svg.getBoundingClientRect();
    const scale = Math.max(box[2] / rect.width, box[3] / rect.height);
    // preserveAspectRatio centres the box, so measure from the centre.
    const x = box[0] + box[2] / 2 + (event.clientX - rect.left - rect.width / 2) * scale;
    const y = box[1] + box[3] / 2 + (event.clientY - rect.top - rect.height / 2) * scale;
    return [x, y, scale];
  }

  svg.addEventListener("wheel", (event) => {
    event.preventDefault();
    const [x, y] = svgPoint(event);
    zoom(event.deltaY > 0 ? 1.15 : 1 / 1.15, x, y);
  }, { passive: false });

  let drag = null;
  canvas.addEventListener("pointerdown", (event) => {
    if (event.target.closest(".node")) return;
    drag = { x: event.clientX, y: event.clientY, box: box.slice(), scale: svgPoint(event)[2] };
    canvas.classList.add("dragging");
  });
  window.addEventListener("pointermove", (event) => {
    if (!drag) return;
    const dx = (event.clientX - drag.x) * drag.scale, dy = (event.clientY - drag.y) * drag.scale;
    show([drag.box[0] - dx, drag.box[1] - dy, drag.box[2], drag.box[3]]);
  });
  window.addEventListener("pointerup", () => {
    drag = null;
    canvas.classList.remove("dragging");
  });

  const [nodeW, nodeH] = data.box;
  const corner = data.nodes.map((_, i) => {
    const t = document.getElementById("n" + i).transform.baseVal.consolidate().matrix;
    return [t.e, t.f];
  });

  // The smallest view holding these nodes (never closer than about their natural size).
  function fitTo(indices) {
    if (!indices.length) return show(full.slice());
    let [x0, y0, x1, y1] = [Infinity, Infinity, -Infinity, -Infinity];
    indices.forEach((i) => {
      x0 = Math.min(x0, corner[i][0]);
      y0 = Math.min(y0, corner[i][1]);
      x1 = Math.max(x1, corner[i][0] + nodeW);
      y1 = Math.max(y1, corner[i][1] + nodeH);
    });
    const w = Math.max(x1 - x0 + 80, 900), h = Math.max(y1 - y0 + 80, 460);
    show([(x0 + x1 - w) / 2, (y0 + y1 - h) / 2, w, h]);
  }

  function shown() {
    return data.nodes.map((_, i) => i).filter(
      (i) => document.getElementById("n" + i).getClientRects().length > 0);
  }

  document.getElementById("zoom-in").addEventListener("click", () => zoom(1 / 1.4));
  document.getElementById("zoom-out").addEventListener("click", () => zoom(1.4));
  document.getElementById("fit").addEventListener("click", () => fitTo(shown()));

  // Only what a claim rests on and what rests on it, following links either way.
  function neighbourhood(index) {
    const seen = new Set([index]);
    for (const forward of [true, false]) {
      const queue = [index];
      while (queue.length) {
        const at = queue.pop();
        data.edges.forEach(([src, dst]) => {
          const [from, to] = forward ? [src, dst] : [dst, src];
          if (from === at && !seen.has(to)) {
            seen.add(to);
            queue.push(to);
          }
        });
      }
    }
    data.nodes.forEach((_, i) => {
      document.getElementById("n" + i).classList.toggle("filtered", !seen.has(i));
    });
    data.edges.forEach(([src, dst], number) => {
      document.getElementById("e" + number).classList.toggle(
        "filtered", !(seen.has(src) && seen.has(dst)));
    });
    document.getElementById("show-all").hidden = false;
    fitTo([...seen]);
  }
  document.getElementById("show-all").addEventListener("click", (event) => {
    document.querySelectorAll("#graph .filtered").forEach((e) => e.classList.remove("filtered"));
    event.target.hidden = true;
    fitTo(shown());
  });

  function element(tag, text, className) {
    const node = document.createElement(tag);
    if (text !== undefined && text !== null) node.textContent = String(text);
    if (className) node.className = className;
    return node;
  }

  function nodeLink(index) {
    const link = element("a", data.nodes[index].id, "to-node");
    link.href = "#n" + index;
    link.dataset.node = String(index);
    return link;
  }

  function centre(index) {
    const g = document.getElementById("n" + index);
    const t = g.transform.baseVal.consolidate().matrix;
    const w = Math.min(Math.max(box[2], 700), full[2]);
    const h = w * (box[3] / box[2]);
    show([t.e + nodeW / 2 - w / 2, t.f + nodeH / 2 - h / 2, w, h]);
  }

  function select(index, recentre) {
    document.querySelectorAll(".node.selected").forEach((n) => n.classList.remove("selected"));
    document.querySelectorAll(".edge.lit").forEach((e) => e.classList.remove("lit"));
    document.querySelectorAll(".sent.current").forEach((s) => s.classList.remove("current"));
    const node = data.nodes[index];
    document.getElementById("n" + index).classList.add("selected");
    if (recentre) centre(index);
    inspector.replaceChildren();
    inspector.appendChild(element("p", node.claim, "claim"));
    const facts = element("dl");
    const fact = (name, value) => {
      facts.appendChild(element("dt", name));
      const dd = element("dd");
      if (value instanceof Node) dd.appendChild(value); else dd.textContent = value;
      facts.appendChild(dd);
    };
    fact("id", node.id);
    fact("type", node.type);
    fact("status", node.state + (node.reason ? " (" + node.reason + ")" : ""));
    fact("confidence", node.confidence === null ? "-" : String(node.confidence));
    fact("runs", node.runs.length ? node.runs.join(", ") : "-");
    if (node.arguments.length) {
      fact("argument", node.arguments.map((k) => "argument " + (k + 1)).join(", "));
    }
    inspector.appendChild(facts);
    const focus = element("button", "show only what it rests on and what rests on it");
    focus.type = "button";
    focus.addEventListener("click", () => neighbourhood(index));
    inspector.appendChild(focus);
    if (node.source !== null && node.type === "given") {
      inspector.appendChild(element("h4", "Cites " + node.source));
      if (node.from) inspector.appendChild(element("p", node.from, "from"));
      const sentence = document.getElementById("s" + node.sentence);
      if (sentence) {
        sentence.classList.add("current");
        const quote = element("blockquote", node.text, "cited");
        inspector.appendChild(quote);
        const go = element("a", "show it in its document");
        go.href = "#s" + node.sentence;
        inspector.appendChild(go);
      } else {
        inspector.appendChild(element("p", "The sentence is not in this page's documents."));
      }
    }
    const links = element("ul");
    data.edges.forEach((edge, number) => {
      const [src, dst, relation, refused] = edge;
      if (src !== index && dst !== index) return;
      document.getElementById("e" + number).classList.add("lit");
      const item = element("li");
      item.appendChild(src === index ? document.createTextNode(relation + " → ") : nodeLink(src));
      if (src !== index) item.appendChild(document.createTextNode(" " + relation + " → this"));
      if (src === index) item.appendChild(nodeLink(dst));
      if (refused) item.appendChild(element("b", " refused: " + refused));
      links.appendChild(item);
    });
    if (links.childElementCount) {
      inspector.appendChild(element("h4", "Links"));
      inspector.appendChild(links);
    }
  }

  svg.addEventListener("click", (event) => {
    const g = event.target.closest(".node");
    if (g) select(Number(g.dataset.i), false);
  });
  svg.addEventListener("keydown", (event) => {
    const g = event.target.closest(".node");
    if (g && (event.key === "Enter" || event.key === " ")) {
      event.preventDefault();
      select(Number(g.dataset.i), false);
    }
  });
  document.body.addEventListener("click", (event) => {
    const link = event.target.closest("a.to-node");
    if (!link) return;
    event.preventDefault();
    select(Number(link.dataset.node), true);
    canvas.scrollIntoView({ block: "nearest" });
  });

  document.querySelectorAll("#toolbar input[data-state]").forEach((box) => {
    box.addEventListener("change", () => {
      svg.classList.toggle("hide-" + box.dataset.state, !box.checked);
      fitTo(shown());
    });
  });
  document.getElementById("only-args").addEventListener("change", (event) => {
    svg.classList.toggle("only-args", event.target.checked);
    fitTo(shown());
  });
  document.getElementById("search").addEventListener("input", (event) => {
    const words = event.target.value.trim().toLowerCase();
    svg.classList.toggle("searching", words.length > 0);
    data.nodes.forEach((node, index) => {
      const hit = words.length > 0 && (node.claim + " " + node.id).toLowerCase().includes(words);
      document.getElementById("n" + index).classList.toggle("match", hit);
    });
  });

  // A big graph opens on the answer's arguments, where a reader starts; "fit" shows all.
  if (data.nodes.length > data.large && data.focus.length) fitTo(data.focus);
  document.body.dataset.ready = "yes";
})();
