// Lyceum's dashboard: one EventSource on /events (protocol/events.md, "The dashboard's
// stream"). A snapshot replaces everything; each progress event updates its course's row and
// the feed. Text is only ever set with textContent, never parsed as HTML: learner ids and
// titles come from other people.
"use strict";

const maxFeed = 50;
const token = new URLSearchParams(location.search).get("token");
const state = { source: null, events: 0, lastEventId: null, snapshots: 0 };
window.lyceumDashboard = state;
let stream = null;

function element(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

function percent(value) {
  return value === null || value === undefined ? "–" : value.toFixed(1) + " %";
}

function courseRow(course) {
  const body = document.querySelector("#courses tbody");
  let row = Array.from(body.rows).find((candidate) => candidate.dataset.course === course.course);
  if (!row) {
    row = document.createElement("tr");
    row.dataset.course = course.course;
    row.append(element("td", "title"), element("td", "number started"), element("td", "number completed"),
      element("td", "completion"), element("td", "progress"), element("td", "number quiz"));
    for (const cell of [row.querySelector(".completion"), row.querySelector(".progress")]) {
      const bar = element("div", "bar");
      bar.append(element("span"));
      cell.append(bar, element("span", "share"));
    }
    body.append(row);
  }
  return row;
}

function showCourse(course, highlight) {
  const row = courseRow(course);
  row.querySelector(".title").textContent = course.title || course.course;
  row.querySelector(".title").title = course.course;
  row.querySelector(".started").textContent = course.started;
  row.querySelector(".completed").textContent = course.completed;
  const completed = course.started > 0 ? (100 * course.completed) / course.started : 0;
  showShare(row.querySelector(".completion"), completed, Math.round(completed) + " % completed");
  // How far the learners are on average: a course whose learners are all half-way has an
  // empty completion bar, and this one shows it is not idle.
  showShare(row.querySelector(".progress"), course.average_percent || 0, percent(course.average_percent) + " watched on average");
  row.querySelector(".quiz").textContent = percent(course.average_quiz_percent);
  if (highlight) {
    row.classList.remove("changed");
    void row.offsetWidth; // restarts the animation
    row.classList.add("changed");
  }
}

function showShare(cell, share, title) {
  cell.querySelector(".bar > span").style.width = share + "%";
  cell.querySelector(".bar").title = title;
  cell.querySelector(".share").textContent = Math.round(share) + " %";
}

function feedItem(event) {
  const item = element("li");
  item.dataset.seq = event.seq;
  item.append(element("span", "type", event.type.replace(/_/g, " ")), " ");
  item.append(element("span", "learner", event.learner), " in ", element("span", "course", event.title || event.course));
  if (event.lesson) {
    const lesson = element("span", "lesson", event.lesson_title || event.lesson);
    lesson.title = event.lesson;
    item.append(" · lesson ", lesson);
  }
  if (event.quiz) item.append(" · score ", element("span", "score", event.quiz.score + "/" + event.quiz.total));
  item.append(" · " + event.percent + " %");
  if (event.completes_course) item.append(" ", element("span", "completed", "course completed"));
  const time = element("time", null, event.time);
  time.dateTime = event.time;
  item.append(time);
  return item;
}

function addToFeed(event) {
  const feed = document.getElementById("feed");
  feed.prepend(feedItem(event));
  while (feed.children.length > maxFeed) feed.lastElementChild.remove();
}

function setStatus(text, name) {
  const status = document.getElementById("status");
  status.textContent = text;
  status.dataset.state = name;
}

function onSnapshot(message) {
  const snapshot = JSON.parse(message.data);
  state.source = snapshot.source;
  state.snapshots += 1;
  state.lastEventId = message.lastEventId;
  document.querySelector("#courses tbody").replaceChildren();
  for (const course of snapshot.courses) showCourse(course, false);
  document.getElementById("feed").replaceChildren();
  for (const event of snapshot.recent) addToFeed(event);
  document.getElementById("source").textContent = snapshot.source ? "source " + snapshot.source : "no events yet";
  setStatus("live", "live");
}

function onProgress(message) {
  const event = JSON.parse(message.data);
  if (state.source && event.source !== state.source) {
    // A restarted publisher numbers from 1 again: start over from a fresh snapshot.
    connect();
    return;
  }
  state.source = event.source;
  state.events += 1;
  state.lastEventId = message.lastEventId;
  showCourse(event.figures, true);
  addToFeed(event);
}

function connect() {
  if (stream) stream.close();
  stream = new EventSource("events" + (token ? "?token=" + encodeURIComponent(token) : ""));
  stream.addEventListener("snapshot", onSnapshot);
  stream.addEventListener("progress", onProgress);
  stream.addEventListener("open", () => setStatus("live", "live"));
  // The browser reconnects by itself, sending Last-Event-ID: the server resends what was missed.
  stream.addEventListener("error", () => setStatus("reconnecting…", "reconnecting"));
}

connect();
